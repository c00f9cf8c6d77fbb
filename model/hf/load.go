package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/format/safetensors"
	"github.com/kvref/kvref/internal/digest"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/tokenizer"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// IsDir reports whether path is a directory holding a config.json.
func IsDir(path string) bool {
	st, err := os.Stat(filepath.Join(path, "config.json"))
	return err == nil && !st.IsDir()
}

// Load opens a Hugging Face model directory: weights memory-mapped, tokenizer from
// tokenizer.json (+ tokenizer_config.json), end-of-generation ids from config.json and
// generation_config.json.
func Load(dir string) (*model.Model, error) {
	cfg, hc, err := readConfig(dir)
	if err != nil {
		return nil, err
	}
	set, err := safetensors.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	m, err := fromSet(dir, cfg, hc, set)
	if err != nil {
		set.Close()
		return nil, err
	}
	if m.Digest, err = dirDigest(dir, set); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// dirDigest names a directory's weights: the SHA-256 over each safetensors file's name and
// SHA-256, in name order, and config.json's (internal/digest: a large file is read for it
// once per version).
func dirDigest(dir string, set *safetensors.Set) (string, error) {
	paths := []string{filepath.Join(dir, "config.json")}
	for _, f := range set.Files {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths[1:])
	var list []byte
	for _, p := range paths {
		sum, err := digest.File(p)
		if err != nil {
			return "", fmt.Errorf("hf: %w", err)
		}
		list = fmt.Appendf(list, "%s %s\n", filepath.Base(p), sum)
	}
	return digest.Bytes(list), nil
}

func fromSet(dir string, cfg model.Config, hc Config, set *safetensors.Set) (*model.Model, error) {
	names := tensorNames{prefix: "model.", lmHead: "lm_head.weight"}
	if cfg.Arch == "gemma2" || cfg.Arch == "gemma3" {
		names = gemmaNames(set)
	}
	w, err := readWeights(set, &cfg, names)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromHFDir(dir) // with the eos ids of config.json and generation_config.json
	if err != nil {
		return nil, err
	}
	if err := checkBOS(dir, hc, cfg.Vocab); err != nil {
		return nil, err
	}
	if tok.VocabSize() > cfg.Vocab {
		return nil, fmt.Errorf("hf: %s: tokenizer has %d tokens but the embedding has %d rows", dir, tok.VocabSize(), cfg.Vocab)
	}
	m, err := model.New(cfg, w, tok, dir, set)
	if err != nil {
		return nil, err
	}
	m.Format = "safetensors"
	if m.ChatTemplates, err = readChatTemplates(dir); err != nil {
		return nil, err
	}
	for _, name := range set.Names() {
		info, _, _ := set.Tensor(name)
		shape := make([]uint64, len(info.Shape))
		for i, d := range info.Shape {
			shape[i] = uint64(d)
		}
		m.Tensors = append(m.Tensors, model.TensorSummary{Name: name, Type: string(info.DType), Shape: shape, Bytes: info.Size()})
	}
	return m, nil
}

// ggufType maps the safetensors float types kvref computes with to the engine's types.
var ggufType = map[safetensors.DType]gguf.TensorType{
	safetensors.F32: gguf.F32, safetensors.F16: gguf.F16, safetensors.BF16: gguf.BF16,
}

// layerMatrixNames are the Hugging Face names of a layer's matrices, in the order of
// model.Layer.Matrices.
var layerMatrixNames = [7]string{
	"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
	"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
}

// tensorNames says where a directory keeps the text model's tensors.
type tensorNames struct {
	prefix string // of the embedding, the final norm and the layers: "model."
	lmHead string // the classifier: "lm_head.weight"
	// gemma: the norms multiply by (1 + w) (the loader adds the 1), and each layer has the
	// post-attention and pre/post-feed-forward norms.
	gemma bool
}

// readWeights finds, shape-checks and wraps every tensor (no copy for matrices).
func readWeights(set *safetensors.Set, cfg *model.Config, names tensorNames) (*model.Weights, error) {
	// load wraps tensor name as a rows × cols matrix; its stored shape must be shape.
	load := func(name string, rows, cols int, shape ...int) (*model.Matrix, error) {
		info, _, ok := set.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("hf: missing tensor %q", name)
		}
		if !slices.Equal(info.Shape, shape) {
			return nil, fmt.Errorf("hf: tensor %q has shape %v, want %v", name, info.Shape, shape)
		}
		typ, ok := ggufType[info.DType]
		if !ok {
			return nil, fmt.Errorf("hf: tensor %q has dtype %s; kvref computes with F32, F16 and BF16", name, info.DType)
		}
		data, err := set.TensorData(name)
		if err != nil {
			return nil, err
		}
		return model.NewMatrix(name, rows, cols, typ, data)
	}
	matrix := func(name string, rows, cols int) (*model.Matrix, error) { return load(name, rows, cols, rows, cols) }
	vector := func(name string, n int) ([]float32, error) {
		m, err := load(name, 1, n, n)
		if err != nil {
			return nil, err
		}
		v := append([]float32(nil), m.Row(0, make([]float32, n))...)
		if i, x := model.CheckFinite(v); i >= 0 {
			return nil, fmt.Errorf("hf: tensor %q holds %v at index %d; norm weights and biases must be finite", name, x, i)
		}
		return v, nil
	}
	// norm reads a norm weight; Gemma's multiply by (1 + w), computed here in float32 as
	// transformers computes 1.0 + weight.float().
	norm := func(name string, n int) ([]float32, error) {
		v, err := vector(name, n)
		if err == nil && names.gemma {
			for i := range v {
				v[i] = 1 + v[i]
			}
		}
		return v, err
	}
	var w model.Weights
	var err error
	if w.TokenEmbed, err = matrix(names.prefix+"embed_tokens.weight", cfg.Vocab, cfg.Dim); err != nil {
		return nil, err
	}
	if w.OutputNorm, err = norm(names.prefix+"norm.weight", cfg.Dim); err != nil {
		return nil, err
	}
	if _, _, ok := set.Tensor(names.lmHead); ok && !cfg.Tied {
		if w.Output, err = matrix(names.lmHead, cfg.Vocab, cfg.Dim); err != nil {
			return nil, err
		}
	} else if cfg.Tied || !ok {
		w.Output = w.TokenEmbed
		cfg.Tied = true
	}
	q, kv := cfg.QDim(), cfg.KVDim()
	w.Layers = make([]model.Layer, cfg.Layers)
	for i := range w.Layers {
		l := &w.Layers[i]
		p := fmt.Sprintf("%slayers.%d.", names.prefix, i)
		for j, m := range l.Matrices(cfg) {
			if *m.Dst, err = matrix(p+layerMatrixNames[j]+".weight", m.Rows, m.Cols); err != nil {
				return nil, err
			}
		}
		if l.AttnNorm, err = norm(p+"input_layernorm.weight", cfg.Dim); err != nil {
			return nil, err
		}
		if names.gemma { // post_attention_layernorm follows attention; pre_feedforward_layernorm is the FFN's input norm
			for _, n := range []struct {
				dst  *[]float32
				name string
			}{{&l.PostAttnNorm, "post_attention_layernorm"}, {&l.FFNNorm, "pre_feedforward_layernorm"}, {&l.PostFFNNorm, "post_feedforward_layernorm"}} {
				if *n.dst, err = norm(p+n.name+".weight", cfg.Dim); err != nil {
					return nil, err
				}
			}
		} else if l.FFNNorm, err = vector(p+"post_attention_layernorm.weight", cfg.Dim); err != nil {
			return nil, err
		}
		if cfg.QKVBias {
			if l.BiasQ, err = vector(p+"self_attn.q_proj.bias", q); err != nil {
				return nil, err
			}
			if l.BiasK, err = vector(p+"self_attn.k_proj.bias", kv); err != nil {
				return nil, err
			}
			if l.BiasV, err = vector(p+"self_attn.v_proj.bias", kv); err != nil {
				return nil, err
			}
		}
		if cfg.QKNorm {
			if l.QNorm, err = norm(p+"self_attn.q_norm.weight", cfg.HeadDim); err != nil {
				return nil, err
			}
			if l.KNorm, err = norm(p+"self_attn.k_norm.weight", cfg.HeadDim); err != nil {
				return nil, err
			}
		}
	}
	if cfg.Arch == "llama" {
		// Apply llama.cpp's conversion permutation: Q/K rows to adjacent-pair order. The
		// model then rotates adjacent pairs and computes bit-identical logits to its GGUF
		// conversion (the permutation moves rows, it does no arithmetic).
		cfg.RopeStyle = kernels.RoPEAdjacent
		qPerm, kPerm := toAdjacent(cfg.Heads, cfg.HeadDim), toAdjacent(cfg.KVHeads, cfg.HeadDim)
		for i := range w.Layers {
			l := &w.Layers[i]
			l.Wq, l.Wk = l.Wq.PermuteRows(qPerm), l.Wk.PermuteRows(kPerm)
			if cfg.QKVBias {
				l.BiasQ, l.BiasK = permute(l.BiasQ, qPerm), permute(l.BiasK, kPerm)
			}
		}
	}
	return &w, nil
}

// toAdjacent is the row permutation from rotate-half order to adjacent-pair order for
// heads of headDim rows: adjacent row 2i of a head is half-order row i, row 2i+1 is
// half-order row i+headDim/2 (llama.cpp's permute() in convert_hf_to_gguf.py).
func toAdjacent(heads, headDim int) []int {
	perm := make([]int, heads*headDim)
	half := headDim / 2
	for h := 0; h < heads; h++ {
		for i := 0; i < half; i++ {
			perm[h*headDim+2*i] = h*headDim + i
			perm[h*headDim+2*i+1] = h*headDim + half + i
		}
	}
	return perm
}

func permute(v []float32, perm []int) []float32 {
	out := make([]float32, len(v))
	for i, p := range perm {
		out[i] = v[p]
	}
	return out
}

// readChatTemplates reads the chat templates of tokenizer_config.json and, as transformers
// does since it saves templates beside it, chat_template.jinja (which is the default).
func readChatTemplates(dir string) (chattemplate.Set, error) {
	set := chattemplate.Set{}
	path := filepath.Join(dir, "tokenizer_config.json")
	if _, err := os.Stat(path); err == nil {
		tc, err := chattemplate.ReadTokenizerConfig(path)
		if err != nil {
			return nil, fmt.Errorf("hf: %w", err)
		}
		set = tc.Templates
	}
	if src, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
		set[chattemplate.DefaultName] = string(src)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("hf: %w", err)
	}
	return set, nil
}

// checkBOS requires the bos_token_id of config.json and generation_config.json, when they
// give one, to be a token of the vocab: an id outside it is an error naming the file and the
// key, never silently another token. (tokenizer.FromHFDir checks their eos_token_id.)
func checkBOS(dir string, hc Config, vocab int) error {
	if err := checkTokenID(hc.BOSTokenID, filepath.Join(dir, "config.json"), "bos_token_id", vocab); err != nil {
		return err
	}
	genPath := filepath.Join(dir, "generation_config.json")
	gen, err := os.ReadFile(genPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("hf: %w", err)
	}
	var g struct {
		BOS json.RawMessage `json:"bos_token_id"`
	}
	if err := json.Unmarshal(gen, &g); err != nil {
		return fmt.Errorf("hf: %s: %w", genPath, err)
	}
	return checkTokenID(g.BOS, genPath, "bos_token_id", vocab)
}

// checkTokenID checks a token id (absent or null: none) against [0, vocab).
func checkTokenID(raw json.RawMessage, path, key string, vocab int) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var id int
	if err := json.Unmarshal(raw, &id); err != nil {
		return fmt.Errorf("hf: %s: %s is %s, want a token id", path, key, raw)
	}
	if id < 0 || id >= vocab {
		return fmt.Errorf("hf: %s: %s %d is outside the vocabulary of %d tokens", path, key, id, vocab)
	}
	return nil
}
