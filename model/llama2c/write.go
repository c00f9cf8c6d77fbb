package llama2c

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	l2c "github.com/kvref/kvref/format/llama2c"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
)

// Write writes m's weights as a legacy (version 0) llama2.c checkpoint, as
// llama2.c's export.py --version 0 does: a positive vocab_size when the
// classifier is the embedding table (the same matrix, or one with bitwise
// equal values), else a negative one and the classifier at the end. The
// unused freq_cis tables are filled with cos and sin of the RoPE angles, as
// export.py fills them. Weights of any type are written as float32, F16 and
// BF16 widening exactly.
//
// The format cannot record anything run.c does not assume, so Write refuses
// models that differ from it: an architecture other than "llama", RoPE other
// than adjacent pairs over the whole head with base 10000, an RMSNorm epsilon
// other than 1e-5, a head width other than dim/heads, rescaled RoPE
// frequencies, Q/K/V biases, Q/K normalisation or a sliding attention
// window. The tokenizer is not
// written; see tokenizer.WriteLlama2c.
func Write(w io.Writer, m *model.Model) error {
	h, err := headerOf(m)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	vocab := int32(h.Vocab)
	if !h.Shared {
		vocab = -vocab
	}
	for _, v := range []int32{int32(h.Dim), int32(h.Hidden), int32(h.Layers), int32(h.Heads), int32(h.KVHeads), vocab, int32(h.SeqLen)} {
		binary.Write(bw, binary.LittleEndian, v)
	}

	buf := make([]byte, 0, 4*max(h.Dim, h.Hidden, h.HeadDim()))
	values := func(xs []float32) {
		buf = buf[:0]
		for _, x := range xs {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
		bw.Write(buf)
	}
	matrix := func(mat *model.Matrix) {
		scratch := make([]float32, mat.Cols)
		for r := range mat.Rows {
			values(mat.Row(r, scratch))
		}
	}
	ws := m.Weights
	perLayer := func(f func(l *model.Layer)) {
		for i := range ws.Layers {
			f(&ws.Layers[i])
		}
	}
	matrix(ws.TokenEmbed)
	perLayer(func(l *model.Layer) { values(l.AttnNorm) })
	perLayer(func(l *model.Layer) { matrix(l.Wq) })
	perLayer(func(l *model.Layer) { matrix(l.Wk) })
	perLayer(func(l *model.Layer) { matrix(l.Wv) })
	perLayer(func(l *model.Layer) { matrix(l.Wo) })
	perLayer(func(l *model.Layer) { values(l.FFNNorm) })
	perLayer(func(l *model.Layer) { matrix(l.Gate) })
	perLayer(func(l *model.Layer) { matrix(l.Down) })
	perLayer(func(l *model.Layer) { matrix(l.Up) })
	values(ws.OutputNorm)
	cos, sin := freqCis(h)
	values(cos)
	values(sin)
	if !h.Shared {
		matrix(ws.Output)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("llama2c: writing %s: %w", m.Source, err)
	}
	return nil
}

// freqCis returns the freq_cis_real and freq_cis_imag tables export.py writes:
// cos and sin of pos·θ_i for every position and every pair i, in float32 as
// PyTorch computes them.
func freqCis(h l2c.Header) (cos, sin []float32) {
	half := h.HeadDim() / 2
	cos = make([]float32, h.SeqLen*half)
	sin = make([]float32, h.SeqLen*half)
	inv := make([]float32, half)
	for i := range inv {
		inv[i] = 1 / float32(math.Pow(RopeBase, float64(float32(2*i)/float32(h.HeadDim()))))
	}
	for pos := range h.SeqLen {
		for i, f := range inv {
			s, c := math.Sincos(float64(float32(pos) * f))
			cos[pos*half+i], sin[pos*half+i] = float32(c), float32(s)
		}
	}
	return cos, sin
}

// headerOf checks that m can be written as a llama2.c checkpoint and returns its header.
func headerOf(m *model.Model) (l2c.Header, error) {
	c := m.Config
	fail := func(format string, args ...any) (l2c.Header, error) {
		return l2c.Header{}, fmt.Errorf("llama2c: cannot write %s as a llama2.c checkpoint: "+format, append([]any{m.Source}, args...)...)
	}
	switch {
	case c.Arch != "llama":
		return fail("architecture %q, want \"llama\"", c.Arch)
	case c.RopeStyle != kernels.RoPEAdjacent:
		return fail("RoPE rotates halves; run.c rotates adjacent pairs")
	case c.RopeBase != RopeBase:
		return fail("RoPE base %g; run.c uses %d", c.RopeBase, RopeBase)
	case c.Heads < 1 || c.HeadDim*c.Heads != c.Dim:
		return fail("head width %d × %d heads ≠ dim %d; run.c uses dim/heads", c.HeadDim, c.Heads, c.Dim)
	case c.RopeDims != c.HeadDim:
		return fail("RoPE rotates %d of %d head dimensions; run.c rotates all", c.RopeDims, c.HeadDim)
	case c.NormEps != NormEps:
		return fail("RMSNorm epsilon %g; run.c uses %g", c.NormEps, NormEps)
	case c.RopeScaling.Type != "" || len(m.Weights.RopeFreqs) > 0:
		return fail("RoPE frequencies are rescaled; run.c does not rescale them")
	case c.QKVBias:
		return fail("Q, K and V projections have biases; run.c has none")
	case c.QKNorm:
		return fail("Q and K are normalised per head; run.c does not normalise them")
	case c.SlidingWindow != 0:
		return fail("attention is limited to a %d-token window; run.c attends over the whole context", c.SlidingWindow)
	}
	for _, v := range []struct {
		name  string
		value int
	}{{"dim", c.Dim}, {"hidden", c.Hidden}, {"layers", c.Layers}, {"heads", c.Heads}, {"kv_heads", c.KVHeads}, {"vocab", c.Vocab}, {"context", c.Context}} {
		if v.value < 1 || v.value > math.MaxInt32 {
			return fail("%s %d does not fit the header's positive int32", v.name, v.value)
		}
	}
	if err := checkWeights(m); err != nil {
		return fail("%v", err)
	}
	w := m.Weights
	h := l2c.Header{Dim: c.Dim, Hidden: c.Hidden, Layers: c.Layers, Heads: c.Heads, KVHeads: c.KVHeads, Vocab: c.Vocab, SeqLen: c.Context,
		Shared: w.Output == w.TokenEmbed || sameValues(w.Output, w.TokenEmbed)}
	if h.HeadDim()%2 != 0 {
		return fail("head width %d is odd", h.HeadDim())
	}
	if h.FileSize() < 0 {
		return fail("the checkpoint would be larger than 2^63 bytes")
	}
	return h, nil
}

// checkWeights checks that every tensor of m has the shape its configuration implies.
func checkWeights(m *model.Model) error {
	c, w := m.Config, m.Weights
	if w == nil || len(w.Layers) != c.Layers {
		return fmt.Errorf("the weights do not hold %d layers", c.Layers)
	}
	type want struct {
		what       string
		m          *model.Matrix
		rows, cols int
	}
	type vec struct {
		what string
		v    []float32
	}
	mats := []want{{"token embedding", w.TokenEmbed, c.Vocab, c.Dim}, {"output", w.Output, c.Vocab, c.Dim}}
	vecs := []vec{{"output norm", w.OutputNorm}}
	for i := range w.Layers {
		l := &w.Layers[i]
		name := func(s string) string { return fmt.Sprintf("layer %d %s", i, s) }
		mats = append(mats,
			want{name("wq"), l.Wq, c.QDim(), c.Dim}, want{name("wk"), l.Wk, c.KVDim(), c.Dim},
			want{name("wv"), l.Wv, c.KVDim(), c.Dim}, want{name("wo"), l.Wo, c.Dim, c.QDim()},
			want{name("gate"), l.Gate, c.Hidden, c.Dim}, want{name("up"), l.Up, c.Hidden, c.Dim},
			want{name("down"), l.Down, c.Dim, c.Hidden})
		vecs = append(vecs, vec{name("attention norm"), l.AttnNorm}, vec{name("feed-forward norm"), l.FFNNorm})
	}
	for _, t := range mats {
		if t.m == nil || t.m.Rows != t.rows || t.m.Cols != t.cols {
			return fmt.Errorf("%s matrix is missing or not %d × %d", t.what, t.rows, t.cols)
		}
	}
	for _, v := range vecs {
		if len(v.v) != c.Dim {
			return fmt.Errorf("%s has %d values, want dim %d", v.what, len(v.v), c.Dim)
		}
	}
	return nil
}

// sameValues reports whether two matrices of equal shape hold bitwise equal values.
func sameValues(a, b *model.Matrix) bool {
	ra, rb := make([]float32, a.Cols), make([]float32, b.Cols)
	for r := range a.Rows {
		x, y := a.Row(r, ra), b.Row(r, rb)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
	}
	return true
}
