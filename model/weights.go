package model

// Layer holds one transformer block's weights.
type Layer struct {
	AttnNorm []float32 // dim
	Wq       *Matrix   // heads·head_dim × dim
	Wk       *Matrix   // kv_heads·head_dim × dim
	Wv       *Matrix   // kv_heads·head_dim × dim
	Wo       *Matrix   // dim × heads·head_dim
	FFNNorm  []float32 // dim
	Gate     *Matrix   // hidden × dim (w1)
	Up       *Matrix   // hidden × dim (w3)
	Down     *Matrix   // dim × hidden (w2)

	BiasQ, BiasK, BiasV []float32 // projection biases (Config.QKVBias)
	QNorm, KNorm        []float32 // head_dim RMSNorm weights shared by all heads (Config.QKNorm)
	// PostAttnNorm and PostFFNNorm normalise the attention and feed-forward outputs before
	// the residual (Config.PostNorms), dim each.
	PostAttnNorm, PostFFNNorm []float32
}

// LayerMatrix is one of a layer's seven weight matrices: where it is stored and the shape
// (rows × cols) a Config gives it.
type LayerMatrix struct {
	Dst        **Matrix
	Rows, Cols int
}

// Matrices returns l's seven weight matrices in the order Wq, Wk, Wv, Wo, Gate, Up, Down,
// each with the shape c gives it: the one list of a layer's matrices that the loaders fill.
func (l *Layer) Matrices(c *Config) [7]LayerMatrix {
	q, kv := c.QDim(), c.KVDim()
	return [7]LayerMatrix{
		{&l.Wq, q, c.Dim}, {&l.Wk, kv, c.Dim}, {&l.Wv, kv, c.Dim}, {&l.Wo, c.Dim, q},
		{&l.Gate, c.Hidden, c.Dim}, {&l.Up, c.Hidden, c.Dim}, {&l.Down, c.Dim, c.Hidden},
	}
}

// Weights holds every tensor of a model.
type Weights struct {
	TokenEmbed *Matrix // vocab × dim
	Layers     []Layer
	OutputNorm []float32 // dim
	Output     *Matrix   // vocab × dim; the embedding itself when tied
	RopeFreqs  []float32 // optional per-frequency divisors (GGUF rope_freqs.weight, Llama 3.1)
}

// StepBytes is what a forward step of rows tokens reads of the stored weights: all of
// Bytes but the token-embedding table, of which it reads only the rows' rows (at most one
// row a token), unless the classifier shares the table and reads it whole.
func (w *Weights) StepBytes(rows int) int64 {
	n, e := w.Bytes(), w.TokenEmbed
	if w.Output != e && e.Rows > 0 {
		n -= e.Bytes() - int64(min(rows, e.Rows))*(e.Bytes()/int64(e.Rows))
	}
	return n
}

// Bytes is the size of all stored weights (a tied output is counted once).
func (w *Weights) Bytes() int64 {
	n := w.TokenEmbed.Bytes() + 4*int64(len(w.OutputNorm))
	if w.Output != w.TokenEmbed {
		n += w.Output.Bytes()
	}
	for _, l := range w.Layers {
		n += 4 * int64(len(l.AttnNorm)+len(l.FFNNorm)+len(l.BiasQ)+len(l.BiasK)+len(l.BiasV)+len(l.QNorm)+len(l.KNorm)+
			len(l.PostAttnNorm)+len(l.PostFFNNorm))
		for _, m := range []*Matrix{l.Wq, l.Wk, l.Wv, l.Wo, l.Gate, l.Up, l.Down} {
			n += m.Bytes()
		}
	}
	return n
}
