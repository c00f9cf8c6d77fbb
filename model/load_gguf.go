package model

import (
	"fmt"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/digest"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/tokenizer"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// Prefault says whether LoadGGUF maps every page of the file before it builds the model
// (gguf.File.Prefault, as llama.cpp's loader does with MAP_POPULATE): the first forward
// pass then takes no page faults on the weights, at the price of reading the whole file
// at load. On by default.
var Prefault = true

// LoadGGUF opens a GGUF file (memory-mapped) and loads the model and its tokenizer. Its
// Digest is the file's SHA-256 (internal/digest: a large file is read for it once per
// version). With Prefault, the whole mapping is made resident first.
func LoadGGUF(path string) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	if Prefault {
		f.Prefault()
	}
	m, err := FromGGUF(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	m.closer = f
	if m.Digest, err = digest.File(path); err != nil {
		m.Close()
		return nil, fmt.Errorf("model: %s: %w", path, err)
	}
	return m, nil
}

// FromGGUF builds a model from a parsed GGUF file. The weights alias the file's data, so
// the file must stay open while the model is used. It sets no Digest: the caller knows
// where the bytes came from (LoadGGUF hashes the file).
func FromGGUF(f *gguf.File, source string) (*Model, error) {
	cfg, err := configFromGGUF(f)
	if err != nil {
		return nil, err
	}
	w, err := weightsFromGGUF(f, &cfg)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	if tok.VocabSize() != cfg.Vocab {
		return nil, fmt.Errorf("model: %s: tokenizer has %d tokens but token_embd.weight has %d rows", f.Path, tok.VocabSize(), cfg.Vocab)
	}
	m, err := New(cfg, w, tok, source, nil)
	if err != nil {
		return nil, err
	}
	m.Format = "gguf"
	if m.ChatTemplates, err = chattemplate.FromGGUF(f); err != nil {
		return nil, err
	}
	for _, t := range f.Tensors {
		shape := make([]uint64, len(t.Dims))
		for i, d := range t.Dims {
			shape[len(t.Dims)-1-i] = d // GGUF lists the innermost dimension first
		}
		m.Tensors = append(m.Tensors, TensorSummary{Name: t.Name, Type: t.Type.String(), Shape: shape, Bytes: t.Size})
	}
	return m, nil
}

// ggufArchitectures are the GGUF architectures kvref computes, with their RoPE convention:
// llama.cpp's converter permutes Llama's Q/K rows for adjacent-pair rotation, while qwen2 and
// qwen3 keep Hugging Face's order and rotate halves (NeoX style).
var ggufArchitectures = map[string]kernels.RoPEStyle{
	"llama":  kernels.RoPEAdjacent,
	"qwen2":  kernels.RoPEHalves,
	"qwen3":  kernels.RoPEHalves,
	"gemma2": kernels.RoPEHalves,
	"gemma3": kernels.RoPEHalves,
}

// configFromGGUF reads the ARCH.* hyper-parameters.
func configFromGGUF(f *gguf.File) (Config, error) {
	arch := f.Architecture()
	style, ok := ggufArchitectures[arch]
	if !ok {
		if arch == "" {
			return Config{}, fmt.Errorf("model: %s: no general.architecture key; is this a model file (and not a vocabulary-only GGUF)?", f.Path)
		}
		return Config{}, UnsupportedArchitecture(fmt.Sprintf("model: %s: general.architecture", f.Path), arch)
	}
	req := func(key string) (int, error) {
		v, err := f.Uint(arch + "." + key)
		if err != nil {
			return 0, err
		}
		if v > 1<<31 {
			return 0, fmt.Errorf("model: %s: %s.%s = %d is absurd", f.Path, arch, key, v)
		}
		return int(v), nil
	}
	cfg := Config{Arch: arch, RopeBase: 10000, RopeStyle: style}
	var err error
	for _, p := range []struct {
		key string
		dst *int
	}{
		{"embedding_length", &cfg.Dim},
		{"block_count", &cfg.Layers},
		{"attention.head_count", &cfg.Heads},
		{"feed_forward_length", &cfg.Hidden},
		{"context_length", &cfg.Context},
	} {
		if *p.dst, err = req(p.key); err != nil {
			return Config{}, err
		}
	}
	cfg.KVHeads = cfg.Heads
	if _, ok := f.Lookup(arch + ".attention.head_count_kv"); ok {
		if cfg.KVHeads, err = req("attention.head_count_kv"); err != nil {
			return Config{}, err
		}
	}
	if _, ok := f.Lookup(arch + ".attention.key_length"); ok {
		if cfg.HeadDim, err = req("attention.key_length"); err != nil {
			return Config{}, err
		}
	} else {
		if cfg.Heads < 1 || cfg.Dim%cfg.Heads != 0 {
			return Config{}, fmt.Errorf("model: %s: embedding_length %d is not a multiple of head_count %d", f.Path, cfg.Dim, cfg.Heads)
		}
		cfg.HeadDim = cfg.Dim / cfg.Heads
	}
	cfg.RopeDims = cfg.HeadDim
	if _, ok := f.Lookup(arch + ".rope.dimension_count"); ok {
		if cfg.RopeDims, err = req("rope.dimension_count"); err != nil {
			return Config{}, err
		}
	}
	if _, ok := f.Lookup(arch + ".rope.freq_base"); ok {
		if cfg.RopeBase, err = f.Float(arch + ".rope.freq_base"); err != nil {
			return Config{}, err
		}
		if err := CheckRopeBase(cfg.RopeBase); err != nil {
			return Config{}, fmt.Errorf("model: %s: %s.rope.freq_base %w", f.Path, arch, err)
		}
	}
	if t, err := f.String(arch + ".rope.scaling.type"); err == nil && t != "none" {
		factor, err := f.Float(arch + ".rope.scaling.factor")
		if err != nil {
			return Config{}, err
		}
		if err := CheckPositiveFinite(factor); err != nil {
			return Config{}, fmt.Errorf("model: %s: %s.rope.scaling.factor %w", f.Path, arch, err)
		}
		cfg.RopeScaling = RopeScaling{Type: t, Factor: factor}
	}
	if _, ok := f.Lookup(arch + ".attention.sliding_window"); ok {
		if cfg.SlidingWindow, err = req("attention.sliding_window"); err != nil {
			return Config{}, err
		}
	}
	_, cfg.QKVBias = f.Tensor("blk.0.attn_q.bias")
	_, cfg.QKNorm = f.Tensor("blk.0.attn_q_norm.weight")
	eps, err := f.Float(arch + ".attention.layer_norm_rms_epsilon")
	if err != nil {
		return Config{}, err
	}
	if err := CheckNormEps(eps); err != nil {
		return Config{}, fmt.Errorf("model: %s: %s.attention.layer_norm_rms_epsilon %w", f.Path, arch, err)
	}
	cfg.NormEps = float32(eps)
	if _, gemma := gemmaPeriod[arch]; gemma {
		if err := gemmaFromGGUF(f, &cfg); err != nil {
			return Config{}, err
		}
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok {
		return Config{}, fmt.Errorf("model: %s: missing tensor \"token_embd.weight\"", f.Path)
	}
	if len(emb.Dims) != 2 || emb.Dims[0] != uint64(cfg.Dim) || emb.Dims[1] > 1<<24 {
		return Config{}, fmt.Errorf("model: %s: tensor \"token_embd.weight\" has dims %v, want [%d vocab]", f.Path, emb.Dims, cfg.Dim)
	}
	cfg.Vocab = int(emb.Dims[1])
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("%w (in %s)", err, f.Path)
	}
	return cfg, nil
}

// ggufLayerMatrixNames are the GGUF names of a layer's matrices (blk.N.NAME.weight), in
// the order of Layer.Matrices.
var ggufLayerMatrixNames = [7]string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}

// weightsFromGGUF finds, shape-checks and wraps every tensor.
func weightsFromGGUF(f *gguf.File, cfg *Config) (*Weights, error) {
	matrix := func(name string, rows, cols int) (*Matrix, error) {
		t, ok := f.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("model: %s: missing tensor %q", f.Path, name)
		}
		if len(t.Dims) != 2 || t.Dims[0] != uint64(cols) || t.Dims[1] != uint64(rows) {
			return nil, fmt.Errorf("model: %s: tensor %q has dims %v, want [%d %d]", f.Path, name, t.Dims, cols, rows)
		}
		data, err := f.TensorData(t)
		if err != nil {
			return nil, err
		}
		m, err := NewMatrix(name, rows, cols, t.Type, data)
		if err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, f.Path)
		}
		return m, nil
	}
	vector := func(name string, n int) ([]float32, error) {
		t, ok := f.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("model: %s: missing tensor %q", f.Path, name)
		}
		if len(t.Dims) != 1 || t.Dims[0] != uint64(n) {
			return nil, fmt.Errorf("model: %s: tensor %q has dims %v, want [%d]", f.Path, name, t.Dims, n)
		}
		data, err := f.TensorData(t)
		if err != nil {
			return nil, err
		}
		m, err := NewMatrix(name, 1, n, t.Type, data)
		if err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, f.Path)
		}
		v := append([]float32(nil), m.Row(0, make([]float32, n))...)
		if i, x := CheckFinite(v); i >= 0 {
			return nil, fmt.Errorf("model: %s: tensor %q holds %v at index %d; norm weights, biases and RoPE divisors must be finite", f.Path, name, x, i)
		}
		return v, nil
	}
	var w Weights
	var err error
	if w.TokenEmbed, err = matrix("token_embd.weight", cfg.Vocab, cfg.Dim); err != nil {
		return nil, err
	}
	if w.OutputNorm, err = vector("output_norm.weight", cfg.Dim); err != nil {
		return nil, err
	}
	if _, ok := f.Tensor("output.weight"); ok {
		if w.Output, err = matrix("output.weight", cfg.Vocab, cfg.Dim); err != nil {
			return nil, err
		}
	} else {
		w.Output = w.TokenEmbed
		cfg.Tied = true
	}
	q, kv := cfg.QDim(), cfg.KVDim()
	w.Layers = make([]Layer, cfg.Layers)
	for i := range w.Layers {
		l := &w.Layers[i]
		name := func(s string) string { return fmt.Sprintf("blk.%d.%s.weight", i, s) }
		for j, m := range l.Matrices(cfg) {
			if *m.Dst, err = matrix(name(ggufLayerMatrixNames[j]), m.Rows, m.Cols); err != nil {
				return nil, err
			}
		}
		if l.AttnNorm, err = vector(name("attn_norm"), cfg.Dim); err != nil {
			return nil, err
		}
		if l.FFNNorm, err = vector(name("ffn_norm"), cfg.Dim); err != nil {
			return nil, err
		}
		if cfg.PostNorms { // Gemma: the norms after attention and after the feed-forward
			if l.PostAttnNorm, err = vector(name("post_attention_norm"), cfg.Dim); err != nil {
				return nil, err
			}
			if l.PostFFNNorm, err = vector(name("post_ffw_norm"), cfg.Dim); err != nil {
				return nil, err
			}
		}
		if cfg.QKVBias {
			bias := func(s string) string { return fmt.Sprintf("blk.%d.%s.bias", i, s) }
			for _, b := range []struct {
				dst  *[]float32
				name string
				n    int
			}{{&l.BiasQ, "attn_q", q}, {&l.BiasK, "attn_k", kv}, {&l.BiasV, "attn_v", kv}} {
				if *b.dst, err = vector(bias(b.name), b.n); err != nil {
					return nil, err
				}
			}
		}
		if cfg.QKNorm {
			if l.QNorm, err = vector(name("attn_q_norm"), cfg.HeadDim); err != nil {
				return nil, err
			}
			if l.KNorm, err = vector(name("attn_k_norm"), cfg.HeadDim); err != nil {
				return nil, err
			}
		}
	}
	if _, ok := f.Tensor("rope_freqs.weight"); ok {
		if w.RopeFreqs, err = vector("rope_freqs.weight", cfg.RopeDims/2); err != nil {
			return nil, err
		}
		for i, d := range w.RopeFreqs {
			if err := CheckPositiveFinite(float64(d)); err != nil {
				return nil, fmt.Errorf("model: %s: tensor \"rope_freqs.weight\" divisor %d %w", f.Path, i, err)
			}
		}
	}
	return &w, nil
}
