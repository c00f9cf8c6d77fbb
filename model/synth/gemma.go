package synth

import (
	"fmt"
	"math"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model"
)

// Gemma 2 and Gemma 3 shapes. The GGUF file is what llama.cpp's converter writes for a
// Hugging Face Gemma checkpoint (convert_hf_to_gguf.py, Gemma2Model and Gemma3Model): the
// same keys, the same tensor names, norm weights holding 1 + w, no output.weight (tied), a
// SentencePiece vocabulary without a dummy prefix. llama.cpp reads the layer pattern, the
// sliding layers' RoPE base and the query scale from the architecture, not from keys, so a
// shape that needs other values than those (GlobalEvery, QueryScalar) has no GGUF file: it
// is written as a Hugging Face directory (Model applies them to the loaded configuration).

// isGemma reports whether the shape is a Gemma architecture.
func (s Shape) isGemma() bool { return s.Arch == "gemma2" || s.Arch == "gemma3" }

// gemmaPeriod is the architecture's pattern period (llama.cpp's set_swa_pattern).
func (s Shape) gemmaPeriod() int {
	if s.Arch == "gemma2" {
		return 2
	}
	return 6
}

// globalEvery is the shape's pattern period.
func (s Shape) globalEvery() int {
	if s.GlobalEvery > 0 {
		return s.GlobalEvery
	}
	return s.gemmaPeriod()
}

// queryScalar is the shape's query_pre_attn_scalar.
func (s Shape) queryScalar() int {
	if s.QueryScalar > 0 {
		return s.QueryScalar
	}
	return model.GGUFQueryScalar(s.Arch, s.Layers, s.Dim, s.Heads, s.headDim())
}

// GGUFExpressible reports why the shape has no GGUF file that llama.cpp would read as the
// same model (nil: it has one).
func (s Shape) GGUFExpressible() error {
	if !s.isGemma() {
		return nil
	}
	if s.globalEvery() != s.gemmaPeriod() {
		return fmt.Errorf("synth: a %s GGUF file cannot say that every %d layers one is global: llama.cpp fixes the pattern at one in %d; write it with --format hf", s.Arch, s.globalEvery(), s.gemmaPeriod())
	}
	if want := model.GGUFQueryScalar(s.Arch, s.Layers, s.Dim, s.Heads, s.headDim()); s.queryScalar() != want {
		return fmt.Errorf("synth: a %s GGUF file cannot carry query_pre_attn_scalar %d: llama.cpp takes %d from the shape (the head dim, or dim/heads for the 27B layer count); write it with --format hf", s.Arch, s.queryScalar(), want)
	}
	return nil
}

// validateGemma checks what only a Gemma shape has.
func (s Shape) validateGemma() error {
	switch {
	case !s.isGemma():
		if s.GlobalEvery != 0 || s.QueryScalar != 0 || s.AttnSoftCap != 0 || s.FinalSoftCap != 0 {
			return fmt.Errorf("synth: the layer pattern, query scalar and soft-caps are Gemma's (--arch gemma2 or gemma3)")
		}
		return nil
	case s.QKVBias || s.QKNorm:
		return fmt.Errorf("synth: %s has no Q/K/V biases, and its q/k norms follow from the architecture", s.Arch)
	case s.RopeScaling.Type == "llama3":
		return fmt.Errorf("synth: %s takes linear RoPE scaling only (on its global layers)", s.Arch)
	case s.GlobalEvery < 0 || s.QueryScalar < 0:
		return fmt.Errorf("synth: the pattern period and the query scalar must be ≥ 1 (0: the architecture's)")
	case s.SlidingWindow > s.Context:
		return fmt.Errorf("synth: sliding window %d is longer than the context %d: those layers would never slide", s.SlidingWindow, s.Context)
	case s.Arch == "gemma2" && s.SlidingWindow == 0:
		return fmt.Errorf("synth: gemma2 needs a sliding window (llama.cpp takes 4096 when the file has none)")
	case s.Arch == "gemma2" && (s.AttnSoftCap <= 0 || s.FinalSoftCap <= 0):
		return fmt.Errorf("synth: gemma2 soft-caps its attention scores and logits (the real models: 50 and 30), got %g and %g", s.AttnSoftCap, s.FinalSoftCap)
	case s.Arch == "gemma3" && s.AttnSoftCap != 0:
		return fmt.Errorf("synth: gemma3 has no attention soft-cap")
	case s.FinalSoftCap < 0 || math.IsNaN(s.AttnSoftCap) || math.IsNaN(s.FinalSoftCap):
		return fmt.Errorf("synth: soft-caps must be > 0 (or 0 for none where the architecture allows it)")
	}
	return nil
}

// gemmaVocabSize is the smallest Gemma-convention vocabulary: <pad>, <eos>, <bos>, <unk>,
// <mask>, <start_of_turn>, <end_of_turn>, the 256 byte tokens and the space piece.
const gemmaVocabSize = 7 + 256 + 1

// The ids of the Gemma-convention vocabulary's special tokens.
const (
	GemmaPad         = 0
	GemmaEOS         = 1
	GemmaBOS         = 2
	GemmaUnk         = 3
	GemmaStartOfTurn = 5
	GemmaEndOfTurn   = 6
	gemmaFirstByte   = 7
)

// addGemmaVocab writes a SentencePiece vocabulary laid out as Gemma's is (<pad> 0, <eos> 1,
// <bos> 2, <unk> 3, then <mask> and the turn tokens; Gemma 3 has the turn tokens at 105 and
// 106, after unused tokens this one leaves out), the 256 <0xNN> byte tokens, the space piece
// "▁", the extra control tokens, and unused tokens up to size, with the keys llama.cpp's
// converter writes for Gemma: tokenizer.ggml.model "llama" and add_space_prefix false.
func addGemmaVocab(w *gguf.Writer, size int, special []string) {
	tokens := []string{"<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"}
	types := []int32{3, 3, 3, 2, 4, 3, 3}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6)
	}
	tokens = append(tokens, "▁")
	types = append(types, 1)
	for _, t := range special {
		tokens = append(tokens, t)
		types = append(types, 3)
	}
	for i := len(tokens); i < size; i++ {
		tokens = append(tokens, fmt.Sprintf("<unused%d>", i))
		types = append(types, 5)
	}
	w.AddString("tokenizer.ggml.model", "llama")
	w.AddString("tokenizer.ggml.pre", "default")
	w.AddStrings("tokenizer.ggml.tokens", tokens)
	w.AddFloat32s("tokenizer.ggml.scores", make([]float32, len(tokens)))
	w.AddInt32s("tokenizer.ggml.token_type", types)
	w.AddUint32("tokenizer.ggml.bos_token_id", GemmaBOS)
	w.AddUint32("tokenizer.ggml.eos_token_id", GemmaEOS)
	w.AddUint32("tokenizer.ggml.unknown_token_id", GemmaUnk)
	w.AddUint32("tokenizer.ggml.padding_token_id", GemmaPad)
	w.AddBool("tokenizer.ggml.add_bos_token", true)
	w.AddBool("tokenizer.ggml.add_eos_token", false)
	w.AddBool("tokenizer.ggml.add_space_prefix", false)
}

// gemmaWriter writes a Gemma shape as llama.cpp's converter would write the checkpoint.
func (s Shape) gemmaWriter() (*gguf.Writer, error) {
	if err := s.GGUFExpressible(); err != nil {
		return nil, err
	}
	vocab := s.Vocab
	if vocab == 0 {
		vocab = gemmaVocabSize + len(s.SpecialTokens)
	}
	headDim := s.headDim()
	a := s.Arch + "."
	w := gguf.NewWriter()
	w.AddString("general.architecture", s.Arch)
	w.AddString("general.name", s.Name)
	w.AddString("general.description", fmt.Sprintf("kvref synthetic model, random weights from seed %d; not trained", s.Seed))
	w.AddUint32("general.file_type", 0) // all F32
	w.AddUint32(a+"context_length", uint32(s.Context))
	w.AddUint32(a+"embedding_length", uint32(s.Dim))
	w.AddUint32(a+"block_count", uint32(s.Layers))
	w.AddUint32(a+"feed_forward_length", uint32(s.Hidden))
	w.AddUint32(a+"attention.head_count", uint32(s.Heads))
	w.AddUint32(a+"attention.head_count_kv", uint32(s.KVHeads))
	w.AddFloat32(a+"attention.layer_norm_rms_epsilon", 1e-6)
	w.AddUint32(a+"attention.key_length", uint32(headDim))
	w.AddUint32(a+"attention.value_length", uint32(headDim))
	w.AddFloat32(a+"rope.freq_base", float32(s.RopeBase))
	if s.Arch == "gemma2" {
		w.AddFloat32(a+"attn_logit_softcapping", float32(s.AttnSoftCap))
	}
	if s.FinalSoftCap > 0 {
		w.AddFloat32(a+"final_logit_softcapping", float32(s.FinalSoftCap))
	}
	if s.SlidingWindow > 0 {
		w.AddUint32(a+"attention.sliding_window", uint32(s.SlidingWindow))
	}
	r, matrix := s.addTail(w, a, vocab, addGemmaVocab)
	// norm writes 1 + w with w near 0, as the converter writes Hugging Face's (1 + w).
	norm := func(name string, n int) error {
		return addF32(w, name, []uint64{uint64(n)}, n, func() float32 { return 1 + 0.1*r.Symmetric() })
	}
	q, kv := s.Heads*headDim, s.KVHeads*headDim
	// Embedding rows of about unit norm: √dim scales them back up to unit variance.
	embBound := float32(math.Sqrt(3 / float64(s.Dim)))
	if err := addF32(w, "token_embd.weight", []uint64{uint64(s.Dim), uint64(vocab)}, s.Dim*vocab, func() float32 { return embBound * r.Symmetric() }); err != nil {
		return nil, err
	}
	for l := 0; l < s.Layers; l++ {
		name := func(t string) string { return fmt.Sprintf("blk.%d.%s.weight", l, t) }
		steps := []func() error{
			func() error { return norm(name("attn_norm"), s.Dim) },
			func() error { return matrix(name("attn_q"), q, s.Dim) },
			func() error { return matrix(name("attn_k"), kv, s.Dim) },
			func() error { return matrix(name("attn_v"), kv, s.Dim) },
		}
		if s.Arch == "gemma3" {
			steps = append(steps,
				func() error { return norm(name("attn_q_norm"), headDim) },
				func() error { return norm(name("attn_k_norm"), headDim) })
		}
		steps = append(steps,
			func() error { return matrix(name("attn_output"), s.Dim, q) },
			func() error { return norm(name("post_attention_norm"), s.Dim) },
			func() error { return norm(name("ffn_norm"), s.Dim) },
			func() error { return matrix(name("ffn_gate"), s.Hidden, s.Dim) },
			func() error { return matrix(name("ffn_up"), s.Hidden, s.Dim) },
			func() error { return matrix(name("ffn_down"), s.Dim, s.Hidden) },
			func() error { return norm(name("post_ffw_norm"), s.Dim) })
		for _, step := range steps {
			if err := step(); err != nil {
				return nil, err
			}
		}
	}
	if err := norm("output_norm.weight", s.Dim); err != nil {
		return nil, err
	}
	return w, nil
}

// GemmaDefaults fills in, for a Gemma shape, what the real models have wherever given says
// the user gave no value (by flag name: "ctx", "sliding-window", "rope-base",
// "attn-softcap", "final-softcap"): Gemma 2 2B's context 8192, window 4096 and soft-caps
// 50 and 30; Gemma 3 1B's context 32768, window 512 and global RoPE base 1000000.
func GemmaDefaults(s *Shape, given func(flag string) bool) {
	ctx, window, base := 32768, 512, 1e6
	if s.Arch == "gemma2" {
		ctx, window, base = 8192, 4096, 10000
		if !given("attn-softcap") {
			s.AttnSoftCap = 50
		}
		if !given("final-softcap") {
			s.FinalSoftCap = 30
		}
	}
	if !given("ctx") {
		s.Context = ctx
	}
	if !given("sliding-window") {
		s.SlidingWindow = window
	}
	if !given("rope-base") {
		s.RopeBase = base
	}
}

// applyHFOnly sets on a Gemma model loaded from the shape's GGUF-expressible twin what only
// a Hugging Face directory can carry: another layer pattern and another query scalar.
func (s Shape) applyHFOnly(m *model.Model) (*model.Model, error) {
	if !s.isGemma() || s.GGUFExpressible() == nil {
		return m, nil
	}
	c := m.Config
	c.QueryScalar = float64(s.queryScalar())
	if c.SlidingWindow > 0 {
		c.SlidingLayers = model.GemmaPattern(c.Layers, s.globalEvery())
	}
	nm, err := model.New(c, m.Weights, m.Tokenizer, m.Source, nil)
	if err != nil {
		return nil, err
	}
	nm.Format, nm.Tensors, nm.ChatTemplates, nm.Digest = m.Format, m.Tensors, m.ChatTemplates, m.Digest
	return nm, nil
}
