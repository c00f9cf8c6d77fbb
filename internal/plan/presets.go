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
