package plan

import (
	"fmt"
	"strings"
)

// Preset is a published model's shape, so that `kvref plan --preset NAME` needs no file.
type Preset struct {
	Name   string // what --preset takes, lower case
	Repo   string // where the shape is published (a Hugging Face repository)
	Source string // which published fields the shape comes from
	Note   string // anything the numbers do not show (sliding windows, biases, …); may be empty
	Shape  Shape
}

// hfFields names the config.json fields every Hugging Face preset is read from.
const hfFields = "config.json: num_hidden_layers, num_attention_heads, num_key_value_heads, " +
	"hidden_size (head_dim = hidden_size / num_attention_heads), intermediate_size, vocab_size, " +
	"max_position_embeddings, tie_word_embeddings"

// llama2cFields names the llama2.c fields the TinyStories presets are read from.
const llama2cFields = "llama2.c ModelArgs as exported in the .bin header: dim, n_layers, n_heads, " +
	"n_kv_heads, vocab_size, max_seq_len; hidden_dim = multiple_of(32, 2/3·4·dim); the classifier " +
	"shares the embedding"

// gemmaFields names the config.json fields the Gemma presets are read from (the text_config
// of Gemma 3's multimodal checkpoints).
const gemmaFields = "config.json (text_config for Gemma 3 4B/12B/27B): num_hidden_layers, num_attention_heads, " +
	"num_key_value_heads, head_dim, hidden_size, intermediate_size, vocab_size, max_position_embeddings, " +
	"sliding_window, layer_types (or sliding_window_pattern); embeddings tied"

// gptOSSFields names the config.json fields the gpt-oss presets are read from.
const gptOSSFields = "config.json: num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, " +
	"hidden_size, vocab_size, max_position_embeddings, sliding_window, layer_types (alternating sliding and full)"

// gptOSSNote is the gpt-oss presets' note.
const gptOSSNote = "arithmetic only: kvref does not run gpt-oss (a mixture of experts in MXFP4); alternate layers attend over 128-token windows, the others over everything; parameters not counted (give --weights)"

// presets is the table behind --preset. Every parameter count the shapes give is checked in
// presets_test.go against the count the model's publisher states.
var presets = []Preset{
	{
		Name: "llama-2-7b", Repo: "meta-llama/Llama-2-7b-hf", Source: hfFields,
		Shape: Shape{Layers: 32, Heads: 32, KVHeads: 32, HeadDim: 128, Dim: 4096, Hidden: 11008, Vocab: 32000, Context: 4096},
	},
	{
		Name: "llama-3-8b", Repo: "meta-llama/Meta-Llama-3-8B", Source: hfFields,
		Shape: Shape{Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, Dim: 4096, Hidden: 14336, Vocab: 128256, Context: 8192},
	},
	{
		Name: "llama-3.1-70b", Repo: "meta-llama/Llama-3.1-70B", Source: hfFields,
		Note:  "max_position_embeddings 131072 reached with llama3 RoPE scaling of the 8192-token pre-training context",
		Shape: Shape{Layers: 80, Heads: 64, KVHeads: 8, HeadDim: 128, Dim: 8192, Hidden: 28672, Vocab: 128256, Context: 131072},
	},
	{
		Name: "mistral-7b", Repo: "mistralai/Mistral-7B-v0.1", Source: hfFields,
		Note:  "sliding_window 4096: a sequence holds the blocks of its last 4096 tokens at most, as kvref and vLLM release the rest",
		Shape: Shape{Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, Dim: 4096, Hidden: 14336, Vocab: 32000, Context: 32768, Window: 4096},
	},
	{
		Name: "qwen2.5-7b", Repo: "Qwen/Qwen2.5-7B", Source: hfFields,
		Note:  "q, k and v projections carry biases (counted in the parameters)",
		Shape: Shape{Layers: 28, Heads: 28, KVHeads: 4, HeadDim: 128, Dim: 3584, Hidden: 18944, Vocab: 152064, Context: 131072, QKVBias: true},
	},
	{
		Name: "tinyllama-1.1b", Repo: "TinyLlama/TinyLlama-1.1B-Chat-v1.0", Source: hfFields,
		Shape: Shape{Layers: 22, Heads: 32, KVHeads: 4, HeadDim: 64, Dim: 2048, Hidden: 5632, Vocab: 32000, Context: 2048},
	},
	{
		Name: "smollm2-135m", Repo: "HuggingFaceTB/SmolLM2-135M", Source: hfFields,
		Shape: Shape{Layers: 30, Heads: 9, KVHeads: 3, HeadDim: 64, Dim: 576, Hidden: 1536, Vocab: 49152, Context: 8192, Tied: true},
	},
	{
		Name: "smollm2-360m", Repo: "HuggingFaceTB/SmolLM2-360M", Source: hfFields,
		Shape: Shape{Layers: 32, Heads: 15, KVHeads: 5, HeadDim: 64, Dim: 960, Hidden: 2560, Vocab: 49152, Context: 8192, Tied: true},
	},
	{
		Name: "smollm2-1.7b", Repo: "HuggingFaceTB/SmolLM2-1.7B", Source: hfFields,
		Shape: Shape{Layers: 24, Heads: 32, KVHeads: 32, HeadDim: 64, Dim: 2048, Hidden: 8192, Vocab: 49152, Context: 8192, Tied: true},
	},
	{
		Name: "gemma-2-2b", Repo: "google/gemma-2-2b", Source: gemmaFields,
		Note:  "13 of 26 layers (alternating) attend over a 4096-token window, the others over everything",
		Shape: Shape{Layers: 26, Heads: 8, KVHeads: 4, HeadDim: 256, Dim: 2304, Hidden: 9216, Vocab: 256000, Context: 8192, Tied: true, Window: 4096, SlidingLayers: 13, Family: "gemma2"},
	},
	{
		Name: "gemma-2-9b", Repo: "google/gemma-2-9b", Source: gemmaFields,
		Note:  "21 of 42 layers (alternating) attend over a 4096-token window",
		Shape: Shape{Layers: 42, Heads: 16, KVHeads: 8, HeadDim: 256, Dim: 3584, Hidden: 14336, Vocab: 256000, Context: 8192, Tied: true, Window: 4096, SlidingLayers: 21, Family: "gemma2"},
	},
	{
		Name: "gemma-2-27b", Repo: "google/gemma-2-27b", Source: gemmaFields,
		Note:  "23 of 46 layers (alternating) attend over a 4096-token window",
		Shape: Shape{Layers: 46, Heads: 32, KVHeads: 16, HeadDim: 128, Dim: 4608, Hidden: 36864, Vocab: 256000, Context: 8192, Tied: true, Window: 4096, SlidingLayers: 23, Family: "gemma2"},
	},
	{
		Name: "gemma-3-270m", Repo: "google/gemma-3-270m", Source: gemmaFields,
		Note:  "15 of 18 layers (five in every six) attend over a 512-token window",
		Shape: Shape{Layers: 18, Heads: 4, KVHeads: 1, HeadDim: 256, Dim: 640, Hidden: 2048, Vocab: 262144, Context: 32768, Tied: true, Window: 512, SlidingLayers: 15, Family: "gemma3"},
	},
	{
		Name: "gemma-3-1b", Repo: "google/gemma-3-1b-it", Source: gemmaFields,
		Note:  "22 of 26 layers (five in every six) attend over a 512-token window",
		Shape: Shape{Layers: 26, Heads: 4, KVHeads: 1, HeadDim: 256, Dim: 1152, Hidden: 6912, Vocab: 262144, Context: 32768, Tied: true, Window: 512, SlidingLayers: 22, Family: "gemma3"},
	},
	{
		Name: "gemma-3-4b", Repo: "google/gemma-3-4b-it", Source: gemmaFields,
		Note:  "29 of 34 layers attend over a 1024-token window; the text model of a multimodal checkpoint (the vision tower is not counted)",
		Shape: Shape{Layers: 34, Heads: 8, KVHeads: 4, HeadDim: 256, Dim: 2560, Hidden: 10240, Vocab: 262208, Context: 131072, Tied: true, Window: 1024, SlidingLayers: 29, Family: "gemma3"},
	},
	{
		Name: "gemma-3-12b", Repo: "google/gemma-3-12b-it", Source: gemmaFields,
		Note:  "40 of 48 layers attend over a 1024-token window; the text model of a multimodal checkpoint (the vision tower is not counted)",
		Shape: Shape{Layers: 48, Heads: 16, KVHeads: 8, HeadDim: 256, Dim: 3840, Hidden: 15360, Vocab: 262208, Context: 131072, Tied: true, Window: 1024, SlidingLayers: 40, Family: "gemma3"},
	},
	{
		Name: "gemma-3-27b", Repo: "google/gemma-3-27b-it", Source: gemmaFields,
		Note:  "52 of 62 layers attend over a 1024-token window; the text model of a multimodal checkpoint (the vision tower is not counted)",
		Shape: Shape{Layers: 62, Heads: 32, KVHeads: 16, HeadDim: 128, Dim: 5376, Hidden: 21504, Vocab: 262208, Context: 131072, Tied: true, Window: 1024, SlidingLayers: 52, Family: "gemma3"},
	},
	{
		Name: "gpt-oss-20b", Repo: "openai/gpt-oss-20b", Source: gptOSSFields, Note: gptOSSNote,
		Shape: Shape{Layers: 24, Heads: 64, KVHeads: 8, HeadDim: 64, Dim: 2880, Vocab: 201088, Context: 131072, Window: 128, SlidingLayers: 12},
	},
	{
		Name: "gpt-oss-120b", Repo: "openai/gpt-oss-120b", Source: gptOSSFields, Note: gptOSSNote,
		Shape: Shape{Layers: 36, Heads: 64, KVHeads: 8, HeadDim: 64, Dim: 2880, Vocab: 201088, Context: 131072, Window: 128, SlidingLayers: 18},
	},
	{
		Name: "stories15m", Repo: "karpathy/tinyllamas (stories15M.bin)", Source: llama2cFields,
		Shape: Shape{Layers: 6, Heads: 6, KVHeads: 6, HeadDim: 48, Dim: 288, Hidden: 768, Vocab: 32000, Context: 256, Tied: true},
	},
	{
		Name: "stories110m", Repo: "karpathy/tinyllamas (stories110M.bin)", Source: llama2cFields,
		Shape: Shape{Layers: 12, Heads: 12, KVHeads: 12, HeadDim: 64, Dim: 768, Hidden: 2048, Vocab: 32000, Context: 1024, Tied: true},
	},
}

// Presets returns every preset, in the order `kvref plan --list` prints them.
func Presets() []Preset { return append([]Preset(nil), presets...) }

// PresetNames returns the names --preset accepts.
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return names
}

// LookupPreset returns the preset called name (case is ignored). The error lists the
// valid names.
func LookupPreset(name string) (Preset, error) {
	want := strings.ToLower(strings.TrimSpace(name))
	for _, p := range presets {
		if p.Name == want {
			return p, nil
		}
	}
	return Preset{}, &UnknownPresetError{Name: name}
}

// UnknownPresetError says that no preset has the name asked for.
type UnknownPresetError struct{ Name string }

// Error lists the valid names.
func (e *UnknownPresetError) Error() string {
	return fmt.Sprintf("plan: unknown preset %q; the presets are %s", e.Name, strings.Join(PresetNames(), ", "))
}
