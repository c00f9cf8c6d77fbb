// Package hf loads and writes Hugging Face model directories: config.json, safetensors
// weights (single file or sharded with model.safetensors.index.json), tokenizer.json,
// tokenizer_config.json and generation_config.json.
//
// Hugging Face checkpoints rotate the halves of each head (x[i], x[i+d/2]) in RoPE, and
// their Q/K rows are in the order that convention expects. Qwen2 and Qwen3 load as they are
// and rotate halves (kernels.RoPEHalves), as llama.cpp does for them. Llama-family
// checkpoints are loaded the way llama.cpp converts them: Q/K rows permuted to
// adjacent-pair order (kernels.RoPEAdjacent), so that a directory and its GGUF conversion
// give bit-identical logits. Write applies the inverse permutation.
package hf

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
)

// Config is the subset of config.json kvref reads.
type Config struct {
	Architectures         []string        `json:"architectures"`
	ModelType             string          `json:"model_type,omitempty"`
	HiddenSize            int             `json:"hidden_size"`
	IntermediateSize      int             `json:"intermediate_size"`
	NumHiddenLayers       int             `json:"num_hidden_layers"`
	NumAttentionHeads     int             `json:"num_attention_heads"`
	NumKeyValueHeads      int             `json:"num_key_value_heads,omitempty"`
	HeadDim               int             `json:"head_dim,omitempty"`
	VocabSize             int             `json:"vocab_size"`
	MaxPositionEmbeddings int             `json:"max_position_embeddings"`
	RMSNormEps            float64         `json:"rms_norm_eps"`
	RopeTheta             float64         `json:"rope_theta,omitempty"`
	RopeScaling           *RopeScaling    `json:"rope_scaling,omitempty"`
	TieWordEmbeddings     bool            `json:"tie_word_embeddings"`
	AttentionBias         bool            `json:"attention_bias,omitempty"`
	SlidingWindow         json.RawMessage `json:"sliding_window,omitempty"` // int or null
	UseSlidingWindow      *bool           `json:"use_sliding_window,omitempty"`
	MaxWindowLayers       int             `json:"max_window_layers,omitempty"` // Qwen2: layers below this attend over everything
	HiddenAct             string          `json:"hidden_act,omitempty"`
	BOSTokenID            json.RawMessage `json:"bos_token_id,omitempty"`
	EOSTokenID            json.RawMessage `json:"eos_token_id,omitempty"`
	TorchDType            string          `json:"torch_dtype,omitempty"`
}

// RopeScaling is config.json's rope_scaling.
type RopeScaling struct {
	RopeType                      string  `json:"rope_type,omitempty"`
	Type                          string  `json:"type,omitempty"` // older spelling of rope_type
	Factor                        float64 `json:"factor"`
	LowFreqFactor                 float64 `json:"low_freq_factor,omitempty"`
	HighFreqFactor                float64 `json:"high_freq_factor,omitempty"`
	OriginalMaxPositionEmbeddings int     `json:"original_max_position_embeddings,omitempty"`
}

// architectures maps config.json's architectures[0] to kvref's architecture name.
var architectures = map[string]string{
	"LlamaForCausalLM":   "llama",
	"MistralForCausalLM": "llama",
	"Qwen2ForCausalLM":   "qwen2",
	"Qwen3ForCausalLM":   "qwen3",
}

// readConfig reads and validates dir/config.json into a model.Config.
func readConfig(dir string) (model.Config, Config, error) {
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return model.Config{}, Config{}, fmt.Errorf("hf: %w (a Hugging Face model directory needs config.json)", err)
	}
	var hc Config
	if err := json.Unmarshal(data, &hc); err != nil {
		return model.Config{}, Config{}, fmt.Errorf("hf: %s: %w", path, err)
	}
	if len(hc.Architectures) != 1 {
		return model.Config{}, Config{}, fmt.Errorf("hf: %s: architectures must name one class, got %v", path, hc.Architectures)
	}
	arch, ok := architectures[hc.Architectures[0]]
	if !ok {
		return model.Config{}, Config{}, fmt.Errorf("hf: %s: unsupported architecture %q (kvref supports LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM)", path, hc.Architectures[0])
	}
	if hc.HiddenAct != "" && hc.HiddenAct != "silu" {
		return model.Config{}, Config{}, fmt.Errorf("hf: %s: hidden_act %q is not supported (kvref computes SwiGLU with silu)", path, hc.HiddenAct)
	}
	c := model.Config{
		Arch: arch, Dim: hc.HiddenSize, Layers: hc.NumHiddenLayers, Heads: hc.NumAttentionHeads,
		KVHeads: hc.NumKeyValueHeads, HeadDim: hc.HeadDim, Hidden: hc.IntermediateSize, Vocab: hc.VocabSize,
		Context: hc.MaxPositionEmbeddings, RopeBase: hc.RopeTheta, RopeStyle: kernels.RoPEHalves,
		NormEps: float32(hc.RMSNormEps), Tied: hc.TieWordEmbeddings,
		QKVBias: arch == "qwen2" || hc.AttentionBias, QKNorm: arch == "qwen3",
	}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads
	}
	if err := model.CheckNormEps(hc.RMSNormEps); err != nil {
		return model.Config{}, Config{}, fmt.Errorf("hf: %s: rms_norm_eps %w (a missing key reads as 0)", path, err)
	}
	if hc.RopeTheta != 0 {
		if err := model.CheckRopeBase(hc.RopeTheta); err != nil {
			return model.Config{}, Config{}, fmt.Errorf("hf: %s: rope_theta %w", path, err)
		}
	}
	if c.HeadDim == 0 && c.Heads > 0 {
		if c.Dim%c.Heads != 0 {
			return model.Config{}, Config{}, fmt.Errorf("hf: %s: hidden_size %d is not a multiple of num_attention_heads %d and head_dim is not given", path, c.Dim, c.Heads)
		}
		c.HeadDim = c.Dim / c.Heads
	}
	c.RopeDims = c.HeadDim
	if c.RopeBase == 0 {
		c.RopeBase = 10000
	}
	if rs := hc.RopeScaling; rs != nil {
		t := rs.RopeType
		if t == "" {
			t = rs.Type
		}
		if t != "default" {
			if err := model.CheckPositiveFinite(rs.Factor); err != nil {
				return model.Config{}, Config{}, fmt.Errorf("hf: %s: rope_scaling.factor %w", path, err)
			}
			c.RopeScaling = model.RopeScaling{Type: t, Factor: rs.Factor, LowFreqFactor: rs.LowFreqFactor,
				HighFreqFactor: rs.HighFreqFactor, OriginalContext: rs.OriginalMaxPositionEmbeddings}
		}
	}
	if len(hc.SlidingWindow) > 0 && string(hc.SlidingWindow) != "null" && (hc.UseSlidingWindow == nil || *hc.UseSlidingWindow) {
		var w int
		if err := json.Unmarshal(hc.SlidingWindow, &w); err != nil {
			return model.Config{}, Config{}, fmt.Errorf("hf: %s: sliding_window: %w", path, err)
		}
		if w < c.Context {
			c.SlidingWindow = w
			if hc.UseSlidingWindow != nil { // Qwen2's layout: only layers from max_window_layers on slide
				c.SlidingFromLayer = min(hc.MaxWindowLayers, c.Layers)
			}
		}
	}
	if err := c.Validate(); err != nil {
		return model.Config{}, Config{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return c, hc, nil
}
