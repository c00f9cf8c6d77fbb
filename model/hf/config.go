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
	"slices"
	"strings"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
)

// Config is the subset of config.json kvref reads (Gemma's keys in gemma.go's reading).
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
	RopeTheta             *float64        `json:"rope_theta,omitempty"` // absent: the architecture's default
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
	DType                 string          `json:"dtype,omitempty"` // transformers' newer name for torch_dtype

	// Gemma 2 and Gemma 3 (gemma.go). Absent keys take transformers' defaults.
	HiddenActivation          string          `json:"hidden_activation,omitempty"`
	QueryPreAttnScalar        float64         `json:"query_pre_attn_scalar,omitempty"`
	AttnLogitSoftcapping      json.RawMessage `json:"attn_logit_softcapping,omitempty"`  // number or null
	FinalLogitSoftcapping     json.RawMessage `json:"final_logit_softcapping,omitempty"` // number or null
	LayerTypes                []string        `json:"layer_types,omitempty"`
	SlidingWindowPattern      *int            `json:"sliding_window_pattern,omitempty"`
	PrivSlidingWindowPattern  *int            `json:"_sliding_window_pattern,omitempty"` // how transformers ≥ 4.53 saves it
	RopeLocalBaseFreq         *float64        `json:"rope_local_base_freq,omitempty"`
	RopeParameters            json.RawMessage `json:"rope_parameters,omitempty"`
	UseBidirectionalAttention bool            `json:"use_bidirectional_attention,omitempty"`
	TextConfig                json.RawMessage `json:"text_config,omitempty"` // Gemma3ForConditionalGeneration
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
	"LlamaForCausalLM":               "llama",
	"MistralForCausalLM":             "llama",
	"Qwen2ForCausalLM":               "qwen2",
	"Qwen3ForCausalLM":               "qwen3",
	"Gemma2ForCausalLM":              "gemma2",
	"Gemma3ForCausalLM":              "gemma3",
	"Gemma3ForConditionalGeneration": "gemma3", // its text part; the vision tower is not read
}

// modelTypes are the model_type values each class is saved with.
var modelTypes = map[string]string{
	"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
	"Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3_text", "Gemma3ForConditionalGeneration": "gemma3",
}

// unrunnableClasses are classes of architectures kvref knows it cannot compute, by the
// GGUF name model.UnsupportedArchitecture explains.
var unrunnableClasses = map[string]string{
	"GptOssForCausalLM": "gpt-oss", "Gemma3nForConditionalGeneration": "gemma3n", "Gemma3nForCausalLM": "gemma3n",
	"GemmaForCausalLM": "gemma", "Gemma3TextModel": "gemma-embd", "Qwen2MoeForCausalLM": "qwen2moe",
	"Qwen3MoeForCausalLM": "qwen3moe", "MixtralForCausalLM": "mixtral", "Llama4ForConditionalGeneration": "llama4",
	"DeepseekV3ForCausalLM": "deepseek2", "DeepseekV2ForCausalLM": "deepseek2",
}

// torchDTypes are the torch_dtype values kvref reads weights of (the tensors' own dtype
// decides the arithmetic; the key must still say one of these).
var torchDTypes = []string{"float32", "float16", "bfloat16"}

// supportedClasses lists the classes of architectures, for messages.
func supportedClasses() string {
	var names []string
	for c := range architectures {
		names = append(names, c)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// checkNames requires model_type and torch_dtype (or dtype), when present, to be values
// the class is saved with: a Llama config.json saying model_type gpt2 or torch_dtype int3
// describes something else.
func checkNames(path, class string, hc Config) error {
	if want := modelTypes[class]; hc.ModelType != "" && hc.ModelType != want {
		return fmt.Errorf("hf: %s: model_type is %q, but %s is saved with model_type %q; this config.json describes another model", path, hc.ModelType, class, want)
	}
	for _, k := range []struct{ key, v string }{{"torch_dtype", hc.TorchDType}, {"dtype", hc.DType}} {
		if k.v != "" && !slices.Contains(torchDTypes, k.v) {
			return fmt.Errorf("hf: %s: %s is %q; kvref reads %s weights", path, k.key, k.v, strings.Join(torchDTypes, ", "))
		}
	}
	return nil
}

// readConfig reads and validates dir/config.json into a model.Config.
func readConfig(dir string) (model.Config, Config, error) {
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return model.Config{}, Config{}, fmt.Errorf("hf: %w (a Hugging Face model directory needs config.json)", err)
	}
	var head struct {
		Architectures []string `json:"architectures"`
	}
	if err := decodeJSON(path, data, &head); err != nil {
		return model.Config{}, Config{}, err
	}
	if len(head.Architectures) != 1 {
		return model.Config{}, Config{}, fmt.Errorf("hf: %s: architectures must name one class, got %v", path, head.Architectures)
	}
	class := head.Architectures[0]
	arch, ok := architectures[class]
	if !ok {
		if name, known := unrunnableClasses[class]; known {
			return model.Config{}, Config{}, model.UnsupportedArchitecture(fmt.Sprintf("hf: %s: architectures names %s", path, class), name)
		}
		return model.Config{}, Config{}, fmt.Errorf("hf: %s: unsupported architecture %q (kvref supports %s)", path, class, supportedClasses())
	}
	if arch == "gemma2" || arch == "gemma3" {
		return readGemmaConfig(path, class, data)
	}
	var hc Config
	if err := decodeJSON(path, data, &hc); err != nil {
		return model.Config{}, Config{}, err
	}
	if err := checkNames(path, class, hc); err != nil {
		return model.Config{}, Config{}, err
	}
	if hc.HiddenAct != "" && hc.HiddenAct != "silu" {
		return model.Config{}, Config{}, fmt.Errorf("hf: %s: hidden_act %q is not supported (kvref computes SwiGLU with silu)", path, hc.HiddenAct)
	}
	c := model.Config{
		Arch: arch, Dim: hc.HiddenSize, Layers: hc.NumHiddenLayers, Heads: hc.NumAttentionHeads,
		KVHeads: hc.NumKeyValueHeads, HeadDim: hc.HeadDim, Hidden: hc.IntermediateSize, Vocab: hc.VocabSize,
		Context: hc.MaxPositionEmbeddings, RopeBase: 10000, RopeStyle: kernels.RoPEHalves,
		NormEps: float32(hc.RMSNormEps), Tied: hc.TieWordEmbeddings,
		QKVBias: arch == "qwen2" || hc.AttentionBias, QKNorm: arch == "qwen3",
	}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads
	}
	if err := model.CheckNormEps(hc.RMSNormEps); err != nil {
		return model.Config{}, Config{}, fmt.Errorf("hf: %s: rms_norm_eps %w (a missing key reads as 0)", path, err)
	}
	if hc.RopeTheta != nil { // absent: 10000, as transformers' default; 0 is refused as GGUF refuses it
		if err := model.CheckRopeBase(*hc.RopeTheta); err != nil {
			return model.Config{}, Config{}, fmt.Errorf("hf: %s: rope_theta %w", path, err)
		}
		c.RopeBase = *hc.RopeTheta
	}
	if c.HeadDim == 0 && c.Heads > 0 {
		if c.Dim%c.Heads != 0 {
			return model.Config{}, Config{}, fmt.Errorf("hf: %s: hidden_size %d is not a multiple of num_attention_heads %d and head_dim is not given", path, c.Dim, c.Heads)
		}
		c.HeadDim = c.Dim / c.Heads
	}
	c.RopeDims = c.HeadDim
	if rs := hc.RopeScaling; rs != nil {
		sc, err := rs.scaling(path, "rope_scaling")
		if err != nil {
			return model.Config{}, Config{}, err
		}
		c.RopeScaling = sc
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

// scaling converts config.json's rope_scaling (named key in messages) to the model's.
func (rs *RopeScaling) scaling(path, key string) (model.RopeScaling, error) {
	t := rs.RopeType
	if t == "" {
		t = rs.Type
	}
	if t == "default" {
		return model.RopeScaling{}, nil
	}
	if err := model.CheckPositiveFinite(rs.Factor); err != nil {
		return model.RopeScaling{}, fmt.Errorf("hf: %s: %s.factor %w", path, key, err)
	}
	return model.RopeScaling{Type: t, Factor: rs.Factor, LowFreqFactor: rs.LowFreqFactor,
		HighFreqFactor: rs.HighFreqFactor, OriginalContext: rs.OriginalMaxPositionEmbeddings}, nil
}
