package synth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvref/kvref/model"
)

// Shapes are named benchmark shapes with the published dimensions of well-known small
// models (random weights, so only the arithmetic and memory traffic are realistic).
var Shapes = map[string]Shape{
	"default": Default,
	"tiny":    Tiny,
	// karpathy/llama2.c stories15M: dim 288, 6 layers, 6 heads, hidden 768, vocab 32000.
	"stories15m": {Name: "stories15m-shape", Dim: 288, Layers: 6, Heads: 6, KVHeads: 6, Hidden: 768, Context: 256, RopeBase: 10000, Seed: 15, Vocab: 32000},
	// karpathy/llama2.c stories110M: dim 768, 12 layers, 12 heads, hidden 2048, vocab 32000.
	"stories110m": {Name: "stories110m-shape", Dim: 768, Layers: 12, Heads: 12, KVHeads: 12, Hidden: 2048, Context: 1024, RopeBase: 10000, Seed: 110, Vocab: 32000},
	// TinyLlama-1.1B: dim 2048, 22 layers, 32 query heads over 4 KV heads, hidden 5632, vocab 32000.
	"tinyllama-1.1b": {Name: "tinyllama-1.1b-shape", Dim: 2048, Layers: 22, Heads: 32, KVHeads: 4, Hidden: 5632, Context: 2048, RopeBase: 10000, Seed: 11, Vocab: 32000},
	// google/gemma-3-270m: dim 640, 18 layers (every sixth global), 4 query heads over 1 KV
	// head of 256, hidden 2048, window 512, vocab 262144.
	"gemma-3-270m": {Name: "gemma-3-270m-shape", Arch: "gemma3", Dim: 640, Layers: 18, Heads: 4, KVHeads: 1, HeadDim: 256, Hidden: 2048,
		Context: 32768, RopeBase: 1000000, Seed: 270, Vocab: 262144, SlidingWindow: 512},
	// google/gemma-3-1b-it: dim 1152, 26 layers, 4 query heads over 1 KV head of 256, hidden 6912, window 512.
	"gemma-3-1b": {Name: "gemma-3-1b-shape", Arch: "gemma3", Dim: 1152, Layers: 26, Heads: 4, KVHeads: 1, HeadDim: 256, Hidden: 6912,
		Context: 32768, RopeBase: 1000000, Seed: 31, Vocab: 262144, SlidingWindow: 512},
	// google/gemma-2-2b-it: dim 2304, 26 layers (alternating), 8 query heads over 4 KV heads of 256, hidden 9216,
	// window 4096, soft-caps 50 and 30, vocab 256000.
	"gemma-2-2b": {Name: "gemma-2-2b-shape", Arch: "gemma2", Dim: 2304, Layers: 26, Heads: 8, KVHeads: 4, HeadDim: 256, Hidden: 9216,
		Context: 8192, RopeBase: 10000, Seed: 22, Vocab: 256000, SlidingWindow: 4096, AttnSoftCap: 50, FinalSoftCap: 30},
}

// Variants are tiny shapes of every architecture kvref computes, for tests that must cover
// each one (cross-format round trips, bitwise cache checks).
var Variants = map[string]Shape{
	"llama-gqa": Tiny,
	"llama-mha": {Name: "tiny-llama-mha", Dim: 32, Layers: 2, Heads: 4, KVHeads: 4, Hidden: 64, Context: 256, RopeBase: 10000, Seed: 8},
	"llama3-rope-scaling": {Name: "tiny-llama3", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 96, Context: 512, RopeBase: 500000, Seed: 9,
		RopeScaling: model.RopeScaling{Type: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalContext: 64}},
	"llama-linear-rope": {Name: "tiny-linear", Dim: 32, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 64, Context: 256, RopeBase: 10000, Seed: 10,
		RopeScaling: model.RopeScaling{Type: "linear", Factor: 4}},
	"qwen2-bias":             {Name: "tiny-qwen2", Arch: "qwen2", Dim: 32, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 64, Context: 256, RopeBase: 1000000, Seed: 12, QKVBias: true},
	"mistral-sliding-window": {Name: "tiny-mistral-swa", Dim: 32, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 64, Context: 256, RopeBase: 10000, Seed: 14, SlidingWindow: 8},
	"qwen3-qk-norm":          {Name: "tiny-qwen3", Arch: "qwen3", Dim: 32, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16, Hidden: 64, Context: 256, RopeBase: 1000000, Seed: 13, QKNorm: true},
	// Gemma 2: alternating sliding (window 8) and global layers, soft-caps 50 and 30 as the
	// real models, head dim 32 ≠ dim/heads.
	"gemma2": {Name: "tiny-gemma2", Arch: "gemma2", Dim: 64, Layers: 4, Heads: 4, KVHeads: 2, HeadDim: 32, Hidden: 128, Context: 512,
		RopeBase: 10000, Seed: 17, SlidingWindow: 8, AttnSoftCap: 50, FinalSoftCap: 30},
	// Gemma 3: five sliding layers (window 8, RoPE base 10000) then a global one (base 1e6,
	// linear scaling 8 as the 4B-27B models), and a seventh sliding; one KV head, q/k norms.
	"gemma3": {Name: "tiny-gemma3", Arch: "gemma3", Dim: 64, Layers: 7, Heads: 4, KVHeads: 1, HeadDim: 32, Hidden: 128, Context: 512,
		RopeBase: 1000000, Seed: 18, SlidingWindow: 8, RopeScaling: model.RopeScaling{Type: "linear", Factor: 8}},
	// Gemma 3 with what only a Hugging Face config can say: every third layer global and
	// query_pre_attn_scalar 48 (not the head dim).
	"gemma3-hf-layout": {Name: "tiny-gemma3-hf", Arch: "gemma3", Dim: 48, Layers: 6, Heads: 2, KVHeads: 2, HeadDim: 16, Hidden: 96, Context: 256,
		RopeBase: 1000000, Seed: 19, SlidingWindow: 6, GlobalEvery: 3, QueryScalar: 48},
}

// ShapeByName returns a named shape, or an error listing the names.
func ShapeByName(name string) (Shape, error) {
	s, ok := Shapes[strings.ToLower(name)]
	if !ok {
		var names []string
		for n := range Shapes {
			names = append(names, n)
		}
		slices.Sort(names)
		return Shape{}, fmt.Errorf("synth: unknown shape %q (known: %s)", name, strings.Join(names, ", "))
	}
	return s, nil
}

// VariantByName returns the ready-made tiny variant of that name, or an error listing the
// names (VariantNames).
func VariantByName(name string) (Shape, error) {
	v, ok := Variants[name]
	if !ok {
		return Shape{}, fmt.Errorf("unknown --variant %q (known: %s)", name, strings.Join(VariantNames(), ", "))
	}
	return v, nil
}

// ForFormat returns s ready to be written in format ("gguf", "hf", "llama2c"): a llama
// shape without a vocabulary size written as llama2c gets the 259 byte-level tokens plus
// the space piece "▁", since llama2.c's run.c looks that piece up for every prompt's dummy
// prefix (and crashes without it).
func (s Shape) ForFormat(format string) Shape {
	if format == "llama2c" && s.Vocab == 0 && (s.Arch == "" || s.Arch == "llama") {
		s.Vocab = 260
	}
	return s
}
