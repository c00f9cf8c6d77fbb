// Package synth makes deterministic random Llama models of any shape: the model kvref runs
// when no -m is given, the tiny models in testdata/, and the benchmark shapes. A model is
// fully determined by its Shape (including the seed), written as a GGUF file by the
// project's own writer and loaded through the same path as any real model.
package synth

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/model"
)

// Shape is the hyper-parameters and seed of a synthetic model.
type Shape struct {
	Name     string  // written as general.name
	Dim      int     // embedding width
	Layers   int     // transformer blocks
	Heads    int     // query heads
	KVHeads  int     // key/value heads (GQA when fewer than Heads)
	Hidden   int     // feed-forward width
	Context  int     // context length
	RopeBase float64 // rotary base
	Seed     uint64  // weights are a pure function of the seed and the shape
	Vocab    int     // 0: the byte-level vocabulary (259 tokens); else a vocabulary of that size padded with "▁" and unused tokens

	// Architecture variants (zero values: plain Llama).
	Arch        string            // GGUF architecture: "" or "llama", "qwen2", "qwen3"
	HeadDim     int               // 0: Dim/Heads; else explicit (Qwen3 style, heads·head_dim ≠ dim allowed)
	QKVBias     bool              // Q/K/V projection biases (Qwen2)
	QKNorm      bool              // per-head Q/K RMSNorm (Qwen3)
	RopeScaling model.RopeScaling // "linear" (GGUF keys) or "llama3" (GGUF rope_freqs.weight)
	// SlidingWindow is every layer's attention window (Mistral style, GGUF
	// ARCH.attention.sliding_window); 0: attention over every position. For Gemma, the
	// window of its sliding layers.
	SlidingWindow int

	// Gemma (Arch "gemma2" or "gemma3", gemma.go): the architecture brings the √dim
	// embedding, the post-norms, GeGLU, tied output, and for gemma3 the q/k norms and the
	// sliding layers' RoPE base 10000 (RopeBase is then the global layers' base).
	GlobalEvery  int     // one layer in GlobalEvery attends globally (0: the architecture's, 2 or 6; others only as a Hugging Face directory)
	QueryScalar  int     // query_pre_attn_scalar (0: what llama.cpp infers, the head dim; others only as a Hugging Face directory)
	AttnSoftCap  float64 // gemma2's attention soft-cap (> 0; the real models' 50)
	FinalSoftCap float64 // the logits' soft-cap (gemma2: > 0, the real models' 30; gemma3: 0 for none)

	// Chat (zero values: none).
	SpecialTokens []string // control tokens after the byte tokens ("<|im_start|>", "<|im_end|>", ...)
	ChatTemplate  string   // written as tokenizer.chat_template
}

// arch is the GGUF architecture name.
func (s Shape) arch() string {
	if s.Arch == "" {
		return "llama"
	}
	return s.Arch
}

// headDim is the width of one head.
func (s Shape) headDim() int {
	if s.HeadDim > 0 {
		return s.HeadDim
	}
	return s.Dim / s.Heads
}

// Default is the shape of the built-in model: small enough to decode instantly, with GQA
// (8 query heads over 2 KV heads).
var Default = Shape{Name: "kvref-synthetic-default", Dim: 128, Layers: 4, Heads: 8, KVHeads: 2, Hidden: 384, Context: 2048, RopeBase: 10000, Seed: 1}

// Tiny is the shape of the model in testdata/.
var Tiny = Shape{Name: "kvref-synthetic-tiny", Dim: 32, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 64, Context: 256, RopeBase: 10000, Seed: 7}

// Validate checks that the shape describes a loadable model.
func (s Shape) Validate() error {
	switch {
	case s.Dim < 1 || s.Layers < 1 || s.Heads < 1 || s.KVHeads < 1 || s.Hidden < 1 || s.Context < 1:
		return fmt.Errorf("synth: every size must be ≥ 1: dim %d, layers %d, heads %d, kv-heads %d, hidden %d, ctx %d",
			s.Dim, s.Layers, s.Heads, s.KVHeads, s.Hidden, s.Context)
	case s.HeadDim == 0 && s.Dim%s.Heads != 0:
		return &HeadDimError{Dim: s.Dim, Heads: s.Heads}
	case s.headDim()%2 != 0:
		return fmt.Errorf("synth: head dim %d must be even for RoPE", s.headDim())
	case s.arch() != "llama" && s.arch() != "qwen2" && s.arch() != "qwen3" && !s.isGemma():
		return fmt.Errorf("synth: unknown architecture %q (llama, qwen2, qwen3, gemma2, gemma3)", s.Arch)
	case s.Heads%s.KVHeads != 0:
		return fmt.Errorf("synth: heads %d must be a multiple of kv-heads %d", s.Heads, s.KVHeads)
	case s.Vocab != 0 && s.Vocab < s.minVocab()+len(s.SpecialTokens):
		return fmt.Errorf("synth: vocab %d is smaller than the %d byte-level tokens and %d special tokens", s.Vocab, s.minVocab(), len(s.SpecialTokens))
	case s.RopeBase <= 0:
		return fmt.Errorf("synth: rope base must be > 0, got %g", s.RopeBase)
	case s.SlidingWindow < 0:
		return fmt.Errorf("synth: sliding window must be ≥ 0, got %d", s.SlidingWindow)
	}
	return s.validateGemma()
}

// minVocab is the size of the architecture's smallest vocabulary.
func (s Shape) minVocab() int {
	if s.isGemma() {
		return gemmaVocabSize
	}
	return byteVocabSize
}

// byteVocabSize is <unk>, <s>, </s> and the 256 byte tokens.
const byteVocabSize = 3 + 256

// Writer returns a GGUF writer holding the model.
func (s Shape) Writer() (*gguf.Writer, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.isGemma() {
		return s.gemmaWriter()
	}
	vocab := s.Vocab
	if vocab == 0 {
		vocab = byteVocabSize + len(s.SpecialTokens)
	}
	headDim := s.headDim()
	a := s.arch() + "."
	w := gguf.NewWriter()
	w.AddString("general.architecture", s.arch())
	w.AddString("general.name", s.Name)
	w.AddString("general.description", fmt.Sprintf("kvref synthetic model, random weights from seed %d; not trained", s.Seed))
	w.AddUint32(a+"context_length", uint32(s.Context))
	w.AddUint32(a+"embedding_length", uint32(s.Dim))
	w.AddUint32(a+"block_count", uint32(s.Layers))
	w.AddUint32(a+"feed_forward_length", uint32(s.Hidden))
	w.AddUint32(a+"attention.head_count", uint32(s.Heads))
	w.AddUint32(a+"attention.head_count_kv", uint32(s.KVHeads))
	w.AddUint32(a+"rope.dimension_count", uint32(headDim))
	w.AddFloat32(a+"rope.freq_base", float32(s.RopeBase))
	w.AddFloat32(a+"attention.layer_norm_rms_epsilon", 1e-5)
	if s.SlidingWindow > 0 {
		w.AddUint32(a+"attention.sliding_window", uint32(s.SlidingWindow))
	}
	if s.HeadDim > 0 {
		w.AddUint32(a+"attention.key_length", uint32(headDim))
		w.AddUint32(a+"attention.value_length", uint32(headDim))
	}
	r, matrix := s.addTail(w, a, vocab, addByteVocab)
	norm := func(name string) error {
		return addF32(w, name, []uint64{uint64(s.Dim)}, s.Dim, func() float32 { return 1 + 0.1*r.Symmetric() })
	}
	q, kv := s.Heads*headDim, s.KVHeads*headDim
	if err := addF32(w, "token_embd.weight", []uint64{uint64(s.Dim), uint64(vocab)}, s.Dim*vocab, r.Symmetric); err != nil {
		return nil, err
	}
	vector := func(name string, n int, scale float32) error {
		return addF32(w, name, []uint64{uint64(n)}, n, func() float32 { return scale * r.Symmetric() })
	}
	for l := 0; l < s.Layers; l++ {
		name := func(t string) string { return fmt.Sprintf("blk.%d.%s.weight", l, t) }
		if s.QKVBias {
			bias := func(t string) string { return fmt.Sprintf("blk.%d.%s.bias", l, t) }
			for _, err := range []error{vector(bias("attn_q"), q, 0.5), vector(bias("attn_k"), kv, 0.5), vector(bias("attn_v"), kv, 0.5)} {
				if err != nil {
					return nil, err
				}
			}
		}
		if s.QKNorm {
			for _, t := range []string{"attn_q_norm", "attn_k_norm"} {
				if err := addF32(w, name(t), []uint64{uint64(headDim)}, headDim, func() float32 { return 1 + 0.1*r.Symmetric() }); err != nil {
					return nil, err
				}
			}
		}
		for _, err := range []error{
			norm(name("attn_norm")),
			matrix(name("attn_q"), q, s.Dim),
			matrix(name("attn_k"), kv, s.Dim),
			matrix(name("attn_v"), kv, s.Dim),
			matrix(name("attn_output"), s.Dim, q),
			norm(name("ffn_norm")),
			matrix(name("ffn_gate"), s.Hidden, s.Dim),
			matrix(name("ffn_up"), s.Hidden, s.Dim),
			matrix(name("ffn_down"), s.Dim, s.Hidden),
		} {
			if err != nil {
				return nil, err
			}
		}
	}
	if err := norm("output_norm.weight"); err != nil {
		return nil, err
	}
	if err := matrix("output.weight", vocab, s.Dim); err != nil {
		return nil, err
	}
	if s.RopeScaling.Type == "llama3" {
		factors := model.Llama3RopeFactors(s.RopeScaling, s.RopeBase, headDim)
		if err := addF32(w, "rope_freqs.weight", []uint64{uint64(len(factors))}, len(factors), func() float32 {
			f := factors[0]
			factors = factors[1:]
			return f
		}); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// addTail writes the keys every synthetic model ends its metadata with (the linear rope
// scaling, the vocabulary of the given size by addVocab, the chat template) and returns the
// random source of s.Seed with matrix, which writes a rows × cols weight of unit-variance
// outputs for unit-variance inputs drawn from it.
func (s Shape) addTail(w *gguf.Writer, a string, vocab int, addVocab func(*gguf.Writer, int, []string)) (*rng.SplitMix64, func(name string, rows, cols int) error) {
	if s.RopeScaling.Type == "linear" {
		w.AddString(a+"rope.scaling.type", "linear")
		w.AddFloat32(a+"rope.scaling.factor", float32(s.RopeScaling.Factor))
	}
	addVocab(w, vocab, s.SpecialTokens)
	if s.ChatTemplate != "" {
		w.AddString("tokenizer.chat_template", s.ChatTemplate)
	}
	r := rng.New(s.Seed)
	matrix := func(name string, rows, cols int) error {
		bound := float32(math.Sqrt(3 / float64(cols))) // unit-variance outputs for unit-variance inputs
		return addF32(w, name, []uint64{uint64(cols), uint64(rows)}, rows*cols, func() float32 { return bound * r.Symmetric() })
	}
	return r, matrix
}

// addF32 adds an F32 tensor whose n values come from gen, in order.
func addF32(w *gguf.Writer, name string, dims []uint64, n int, gen func() float32) error {
	data := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(gen()))
	}
	return w.AddTensor(name, gguf.F32, dims, data)
}

// addByteVocab writes a SentencePiece vocabulary with <unk>, <s>, </s> and the 256
// <0xNN> byte tokens, so any text tokenizes (byte by byte), then the special (control)
// tokens, padded up to size with the space piece "▁" (id 259 when there are no special
// tokens) and then unused tokens. llama2.c's run.c needs the space piece: its encoder looks
// " " up for the dummy prefix of every prompt and reads vocab[-1] when it is missing.
func addByteVocab(w *gguf.Writer, size int, special []string) {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{2, 3, 3}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6)
	}
	for _, t := range special {
		tokens = append(tokens, t)
		types = append(types, 3)
	}
	if len(tokens) < size {
		tokens = append(tokens, "▁")
		types = append(types, 1)
	}
	for i := len(tokens); i < size; i++ {
		tokens = append(tokens, fmt.Sprintf("<unused%d>", i))
		types = append(types, 5)
	}
	w.AddString("tokenizer.ggml.model", "llama")
	w.AddStrings("tokenizer.ggml.tokens", tokens)
	w.AddFloat32s("tokenizer.ggml.scores", make([]float32, len(tokens)))
	w.AddInt32s("tokenizer.ggml.token_type", types)
	w.AddUint32("tokenizer.ggml.unknown_token_id", 0)
	w.AddUint32("tokenizer.ggml.bos_token_id", 1)
	w.AddUint32("tokenizer.ggml.eos_token_id", 2)
	w.AddBool("tokenizer.ggml.add_bos_token", true)
	w.AddBool("tokenizer.ggml.add_space_prefix", false)
}
