package hf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kvref/kvref/format/safetensors"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/tokenizer"
)

// WriteOptions adjusts Write.
type WriteOptions struct {
	// RopeScaling is written as config.json's rope_scaling when the model's own
	// configuration has none (a GGUF Llama 3.1 keeps it as rope_freqs divisors only).
	RopeScaling *model.RopeScaling
	// TokenizerJSON is written as tokenizer.json when set; otherwise one is generated from
	// the model's vocabulary, which must have no merges (byte-level vocabularies such as
	// the synthetic models').
	TokenizerJSON []byte
}

// Write writes m as a Hugging Face directory: config.json, model.safetensors (F32),
// tokenizer.json, tokenizer_config.json and generation_config.json. Q/K rows of a model
// that rotates adjacent pairs (GGUF llama) are permuted to Hugging Face's rotate-half
// order, so the written model computes the same function.
func Write(dir string, m *model.Model, opts WriteOptions) error {
	c := m.Config
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	class := map[string]string{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
		"gemma2": "Gemma2ForCausalLM", "gemma3": "Gemma3ForCausalLM"}[c.Arch]
	if class == "" {
		return fmt.Errorf("hf: cannot write architecture %q", c.Arch)
	}
	if len(m.Weights.RopeFreqs) > 0 && c.RopeScaling.Type == "" && opts.RopeScaling == nil {
		return fmt.Errorf("hf: the model has rope_freqs divisors but no rope_scaling parameters; pass WriteOptions.RopeScaling")
	}
	theta := c.RopeBase
	hc := Config{
		Architectures: []string{class}, ModelType: c.Arch, HiddenSize: c.Dim, IntermediateSize: c.Hidden,
		NumHiddenLayers: c.Layers, NumAttentionHeads: c.Heads, NumKeyValueHeads: c.KVHeads, HeadDim: c.HeadDim,
		VocabSize: c.Vocab, MaxPositionEmbeddings: c.Context, RMSNormEps: float64(c.NormEps), RopeTheta: &theta,
		TieWordEmbeddings: c.Tied, AttentionBias: c.QKVBias && c.Arch == "llama", HiddenAct: "silu", TorchDType: "float32",
	}
	gemma := isGemma(c)
	if gemma {
		writeGemmaConfig(&hc, c, class)
	} else if c.SlidingWindow > 0 {
		hc.SlidingWindow = json.RawMessage(strconv.Itoa(c.SlidingWindow))
		if c.SlidingFromLayer > 0 { // Qwen2's layout
			use := true
			hc.UseSlidingWindow, hc.MaxWindowLayers = &use, c.SlidingFromLayer
		}
	}
	rs := c.RopeScaling
	if opts.RopeScaling != nil {
		rs = *opts.RopeScaling
	}
	if rs.Type != "" {
		hc.RopeScaling = &RopeScaling{RopeType: rs.Type, Factor: rs.Factor, LowFreqFactor: rs.LowFreqFactor,
			HighFreqFactor: rs.HighFreqFactor, OriginalMaxPositionEmbeddings: rs.OriginalContext}
	}
	if err := writeJSON(filepath.Join(dir, "config.json"), hc); err != nil {
		return err
	}
	tensors, err := tensorsOf(m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, tensors, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), buf.Bytes(), 0o644); err != nil {
		return err
	}
	tj := opts.TokenizerJSON
	if tj == nil {
		if tj, err = byteVocabTokenizerJSON(m); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644); err != nil {
		return err
	}
	tok := m.Tokenizer
	tc := map[string]any{"add_bos_token": tok.AddBOS(), "add_eos_token": false}
	if tok.BOS() >= 0 {
		tc["bos_token"] = tok.TokenText(tok.BOS())
	}
	if tok.EOS() >= 0 {
		tc["eos_token"] = tok.TokenText(tok.EOS())
	}
	if err := writeJSON(filepath.Join(dir, "tokenizer_config.json"), tc); err != nil {
		return err
	}
	gen := map[string]any{}
	if tok.BOS() >= 0 {
		gen["bos_token_id"] = tok.BOS()
	}
	if eog := endOfGeneration(tok); len(eog) > 1 { // as Gemma's [<eos>, <end_of_turn>]
		gen["eos_token_id"] = eog
	} else if tok.EOS() >= 0 {
		gen["eos_token_id"] = tok.EOS()
	}
	return writeJSON(filepath.Join(dir, "generation_config.json"), gen)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// tensorsOf lists the model's tensors under Hugging Face names, as F32.
func tensorsOf(m *model.Model) ([]safetensors.Tensor, error) {
	c, w := m.Config, m.Weights
	permute := c.RopeStyle == kernels.RoPEAdjacent
	var out []safetensors.Tensor
	addMatrix := func(name string, mat *model.Matrix, headRows bool) {
		rows := make([][]float32, mat.Rows)
		for r := range rows {
			rows[r] = append([]float32(nil), mat.Row(r, make([]float32, mat.Cols))...)
		}
		if headRows && permute {
			rows = toHalves(rows, c.HeadDim)
		}
		data := make([]byte, 0, 4*mat.Rows*mat.Cols)
		for _, row := range rows {
			data = appendF32(data, row)
		}
		out = append(out, safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: []int{mat.Rows, mat.Cols}, Data: data})
	}
	addVector := func(name string, v []float32, headRows bool) {
		if headRows && permute {
			rows := make([][]float32, len(v))
			for i := range v {
				rows[i] = v[i : i+1]
			}
			rows = toHalves(rows, c.HeadDim)
			v = make([]float32, 0, len(rows))
			for _, r := range rows {
				v = append(v, r[0])
			}
		}
		out = append(out, safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: []int{len(v)}, Data: appendF32(nil, v)})
	}
	// addNorm writes a norm weight; Gemma's as Hugging Face stores them, w for the (1 + w)
	// the model multiplies by.
	var normErr error
	addNorm := func(name string, v []float32) {
		if isGemma(c) {
			d := make([]float32, len(v))
			for i, x := range v {
				if d[i] = x - 1; d[i]+1 != x && normErr == nil {
					normErr = fmt.Errorf("hf: norm weight %d of %s (%g) cannot be written exactly as Hugging Face's 1 + w", i, name, x)
				}
			}
			v = d
		}
		addVector(name, v, false)
	}
	addMatrix("model.embed_tokens.weight", w.TokenEmbed, false)
	addNorm("model.norm.weight", w.OutputNorm)
	if !c.Tied {
		addMatrix("lm_head.weight", w.Output, false)
	}
	for i, l := range w.Layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		addNorm(p+"input_layernorm.weight", l.AttnNorm)
		if isGemma(c) {
			addNorm(p+"post_attention_layernorm.weight", l.PostAttnNorm)
			addNorm(p+"pre_feedforward_layernorm.weight", l.FFNNorm)
			addNorm(p+"post_feedforward_layernorm.weight", l.PostFFNNorm)
		} else {
			addVector(p+"post_attention_layernorm.weight", l.FFNNorm, false)
		}
		addMatrix(p+"self_attn.q_proj.weight", l.Wq, true)
		addMatrix(p+"self_attn.k_proj.weight", l.Wk, true)
		addMatrix(p+"self_attn.v_proj.weight", l.Wv, false)
		addMatrix(p+"self_attn.o_proj.weight", l.Wo, false)
		addMatrix(p+"mlp.gate_proj.weight", l.Gate, false)
		addMatrix(p+"mlp.up_proj.weight", l.Up, false)
		addMatrix(p+"mlp.down_proj.weight", l.Down, false)
		if c.QKVBias {
			addVector(p+"self_attn.q_proj.bias", l.BiasQ, true)
			addVector(p+"self_attn.k_proj.bias", l.BiasK, true)
			addVector(p+"self_attn.v_proj.bias", l.BiasV, false)
		}
		if c.QKNorm {
			if permute {
				return nil, fmt.Errorf("hf: q/k norm weights of an adjacent-pair model cannot be permuted per row; write a halves-style model")
			}
			addNorm(p+"self_attn.q_norm.weight", l.QNorm)
			addNorm(p+"self_attn.k_norm.weight", l.KNorm)
		}
	}
	if normErr != nil {
		return nil, normErr
	}
	return out, nil
}

// toHalves reorders the rows of each head from adjacent-pair order (pair i at rows 2i,
// 2i+1) to rotate-half order (pair i at rows i, i+d/2): the inverse of llama.cpp's
// permute() in convert_hf_to_gguf.py.
func toHalves(rows [][]float32, headDim int) [][]float32 {
	out := make([][]float32, len(rows))
	half := headDim / 2
	for h := 0; h < len(rows)/headDim; h++ {
		for i := 0; i < half; i++ {
			out[h*headDim+i] = rows[h*headDim+2*i]
			out[h*headDim+half+i] = rows[h*headDim+2*i+1]
		}
	}
	return out
}

func appendF32(b []byte, v []float32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// byteVocabTokenizerJSON describes a merge-free SentencePiece vocabulary (control tokens,
// <0xNN> byte tokens, unused padding) as a tokenizer.json: BPE with byte fallback and no
// merges, BOS prepended by the post-processor.
func byteVocabTokenizerJSON(m *model.Model) ([]byte, error) {
	tok := m.Tokenizer
	var types []int32 // GGUF token types, when the tokenizer has them
	if spm, ok := tok.(*tokenizer.SPM); ok {
		types = spm.Vocab().Types
	}
	vocab := make(map[string]int, tok.VocabSize())
	var added []map[string]any
	for id := 0; id < tok.VocabSize(); id++ {
		text := tok.TokenText(id)
		if len([]rune(text)) > 1 && !(len(text) == 6 && text[:3] == "<0x" && text[5] == '>') && text[0] != '<' {
			return nil, fmt.Errorf("hf: token %d %q looks like a merged token; generating tokenizer.json needs a merge-free vocabulary (pass WriteOptions.TokenizerJSON)", id, text)
		}
		vocab[text] = id
		// Control tokens are special added tokens, user-defined ones plain added tokens, as
		// transformers' converters add a SentencePiece model's (<start_of_turn> included).
		control := id == tok.BOS() || id == tok.EOS() || text == "<unk>" || (types != nil && types[id] == tokenizer.TypeControl)
		if control || (types != nil && types[id] == tokenizer.TypeUserDefined) {
			added = append(added, map[string]any{"id": id, "content": text, "single_word": false, "lstrip": false,
				"rstrip": false, "normalized": false, "special": control})
		}
	}
	bos := tok.TokenText(max(tok.BOS(), 0))
	var preTokenizer any // Gemma's converter splits at spaces, merged with the piece before
	if isGemma(m.Config) {
		preTokenizer = map[string]any{"type": "Split", "pattern": map[string]any{"String": " "}, "behavior": "MergedWithPrevious", "invert": false}
	}
	tj := map[string]any{
		"version":      "1.0",
		"truncation":   nil,
		"padding":      nil,
		"added_tokens": added,
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
		}},
		"pre_tokenizer": preTokenizer,
		"post_processor": map[string]any{
			"type":           "TemplateProcessing",
			"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": bos, "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"pair":           []any{map[string]any{"SpecialToken": map[string]any{"id": bos, "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}}},
			"special_tokens": map[string]any{bos: map[string]any{"id": bos, "ids": []int{tok.BOS()}, "tokens": []string{bos}}},
		},
		"decoder": map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
			map[string]any{"type": "ByteFallback"},
			map[string]any{"type": "Fuse"},
		}},
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": "<unk>", "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": true, "byte_fallback": true, "ignore_merges": false, "vocab": vocab, "merges": []any{}},
	}
	return json.MarshalIndent(tj, "", " ")
}
