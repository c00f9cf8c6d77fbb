// Package model holds a Llama-family transformer: its configuration, its weights, the
// batched forward pass that reads and writes the paged KV cache (forward.go), and the
// cache-free reference forward every cached result is checked against (reference.go).
package model

import (
	"fmt"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/plan"
)

// Config holds a model's hyper-parameters.
type Config struct {
	Arch      string            `json:"architecture"`
	Dim       int               `json:"dim"`         // embedding width
	Layers    int               `json:"layers"`      // transformer blocks
	Heads     int               `json:"heads"`       // query heads
	KVHeads   int               `json:"kv_heads"`    // key/value heads (GQA when < Heads)
	HeadDim   int               `json:"head_dim"`    // width of one head
	Hidden    int               `json:"hidden_dim"`  // feed-forward width
	Vocab     int               `json:"vocab_size"`  // rows of the embedding
	Context   int               `json:"context"`     // trained context length
	RopeBase  float64           `json:"rope_base"`   // rotary frequency base
	RopeDims  int               `json:"rope_dims"`   // rotated dimensions per head
	RopeStyle kernels.RoPEStyle `json:"rope_style"`  // which pairs rotate together
	NormEps   float32           `json:"norm_eps"`    // RMSNorm epsilon
	Tied      bool              `json:"tied_output"` // output projection shares the embedding

	QKVBias       bool        `json:"qkv_bias,omitempty"`       // Q, K, V projections add a bias (Qwen2)
	QKNorm        bool        `json:"qk_norm,omitempty"`        // per-head RMSNorm of Q and K before RoPE (Qwen3)
	RopeScaling   RopeScaling `json:"rope_scaling,omitempty"`   // context extension of the rotary frequencies
	SlidingWindow int         `json:"sliding_window,omitempty"` // attention window (Mistral, Qwen2); 0: none
	// SlidingFromLayer is the first layer that attends over the window; the layers before it
	// attend over every position (Qwen2's max_window_layers). 0: every layer slides.
	SlidingFromLayer int `json:"sliding_from_layer,omitempty"`

	// The Gemma 2 and Gemma 3 block (zero values: the Llama block). Which layer attends how
	// is read through LayerSpec (layers.go), never from these fields directly.

	// SlidingLayers marks, one entry per layer, the layers that attend over SlidingWindow
	// (Hugging Face's layer_types; a GGUF architecture's fixed pattern). nil: the layers from
	// SlidingFromLayer on.
	SlidingLayers []bool `json:"sliding_layers,omitempty"`
	// LocalRope is the rotary embedding of the sliding layers when it is not the global one
	// (Gemma 3: base rope_local_base_freq, no scaling); nil: every layer uses RopeBase and
	// RopeScaling.
	LocalRope *Rope `json:"local_rope,omitempty"`
	// EmbedScale multiplies the token embedding by √Dim, rounded to float32 (Gemma).
	EmbedScale bool `json:"embed_scale,omitempty"`
	// PostNorms normalises each attention output and each feed-forward output (RMSNorm with
	// its own weight) before it is added to the residual stream (Gemma 2 and 3).
	PostNorms bool `json:"post_norms,omitempty"`
	// Activation is the feed-forward gate: "" for SwiGLU (silu), ActivationGELUTanh for
	// Gemma's GeGLU.
	Activation string `json:"activation,omitempty"`
	// QueryScalar makes the attention scale QueryScalar^-½ (query_pre_attn_scalar); 0: the
	// usual 1/√HeadDim.
	QueryScalar float64 `json:"query_scalar,omitempty"`
	// AttnSoftCap caps every attention score s at AttnSoftCap·tanh(s/AttnSoftCap) before the
	// softmax (Gemma 2); 0: none.
	AttnSoftCap float64 `json:"attn_softcap,omitempty"`
	// FinalSoftCap caps every logit likewise (Gemma 2); 0: none.
	FinalSoftCap float64 `json:"final_softcap,omitempty"`
}

// ActivationGELUTanh is Config.Activation for a GELU-gated feed-forward with the tanh
// approximation (Hugging Face's gelu_pytorch_tanh, ggml's gelu): Gemma's.
const ActivationGELUTanh = "gelu_tanh"

// Rope is one rotary embedding's parameters.
type Rope struct {
	Base    float64     `json:"base"`
	Scaling RopeScaling `json:"scaling,omitempty"`
}

// RopeScaling rescales the rotary frequencies for longer contexts, as Hugging Face's
// rope_scaling does.
type RopeScaling struct {
	Type            string  `json:"type,omitempty"` // "", "linear" or "llama3"
	Factor          float64 `json:"factor,omitempty"`
	LowFreqFactor   float64 `json:"low_freq_factor,omitempty"`                  // llama3
	HighFreqFactor  float64 `json:"high_freq_factor,omitempty"`                 // llama3
	OriginalContext int     `json:"original_max_position_embeddings,omitempty"` // llama3
}

// Validate checks that the hyper-parameters describe a computable model.
func (c Config) Validate() error {
	switch {
	case c.Dim < 1 || c.Layers < 1 || c.Heads < 1 || c.KVHeads < 1 || c.HeadDim < 1 || c.Hidden < 1 || c.Vocab < 1:
		return fmt.Errorf("model: every size must be ≥ 1: dim %d, layers %d, heads %d, kv_heads %d, head_dim %d, hidden %d, vocab %d",
			c.Dim, c.Layers, c.Heads, c.KVHeads, c.HeadDim, c.Hidden, c.Vocab)
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("model: %d query heads cannot be grouped over %d KV heads (must divide evenly)", c.Heads, c.KVHeads)
	case c.RopeDims < 0 || c.RopeDims > c.HeadDim || c.RopeDims%2 != 0:
		return fmt.Errorf("model: rope dimension count %d must be even and at most head_dim %d", c.RopeDims, c.HeadDim)
	case c.Context < 1:
		return fmt.Errorf("model: context length must be ≥ 1, got %d", c.Context)
	case c.SlidingWindow < 0:
		return fmt.Errorf("model: sliding window must be ≥ 0, got %d", c.SlidingWindow)
	case c.SlidingFromLayer < 0 || c.SlidingFromLayer > c.Layers:
		return fmt.Errorf("model: the first sliding-window layer must be from 0 to the %d layers, got %d", c.Layers, c.SlidingFromLayer)
	}
	if err := CheckRopeBase(c.RopeBase); err != nil {
		return fmt.Errorf("model: rope_base %w", err)
	}
	if err := CheckNormEps(float64(c.NormEps)); err != nil {
		return fmt.Errorf("model: norm_eps %w", err)
	}
	if err := c.RopeScaling.validate(); err != nil {
		return err
	}
	if err := c.validateGemma(); err != nil {
		return err
	}
	const limit = 1 << 24
	if c.Dim > limit || c.Hidden > limit || c.Vocab > limit || c.Heads*c.HeadDim > limit || c.Layers > 4096 {
		return fmt.Errorf("model: sizes beyond kvref's limits: dim %d, hidden %d, vocab %d, heads·head_dim %d, layers %d",
			c.Dim, c.Hidden, c.Vocab, c.Heads*c.HeadDim, c.Layers)
	}
	return nil
}

// QDim is the width of all query heads together.
func (c Config) QDim() int { return c.Heads * c.HeadDim }

// KVDim is the width of all key (or value) heads together: one cache row.
func (c Config) KVDim() int { return c.KVHeads * c.HeadDim }

// PlanShape is the configuration's shape for the cache arithmetic of internal/plan.
func (c Config) PlanShape() plan.Shape {
	s := plan.Shape{
		Layers: c.Layers, Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
		Dim: c.Dim, Hidden: c.Hidden, Vocab: c.Vocab, Context: c.Context, Tied: c.Tied, Window: c.ReclaimWindow(),
	}
	if n := c.SlidingCount(); n > 0 && n < c.Layers { // sliding layers beside full ones: cache groups
		s.Window, s.SlidingLayers = c.SlidingWindow, n
	}
	if c.Arch == "gemma2" || c.Arch == "gemma3" {
		s.Family = c.Arch
	}
	return s
}

// validate checks the scaling's parameters.
func (r RopeScaling) validate() error {
	switch r.Type {
	case "":
	case "linear":
		if err := CheckPositiveFinite(r.Factor); err != nil {
			return fmt.Errorf("model: the linear rope scaling factor %w", err)
		}
	case "llama3":
		finite := CheckPositiveFinite(r.Factor) == nil && CheckPositiveFinite(r.LowFreqFactor) == nil && CheckPositiveFinite(r.HighFreqFactor) == nil
		if !finite || r.HighFreqFactor <= r.LowFreqFactor || r.OriginalContext < 1 {
			return fmt.Errorf("model: llama3 rope scaling needs finite factor > 0, 0 < low_freq_factor < high_freq_factor and an original context, got %+v", r)
		}
	default:
		return fmt.Errorf("model: unsupported rope scaling type %q (kvref supports linear and llama3)", r.Type)
	}
	return nil
}
