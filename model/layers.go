package model

import (
	"fmt"
	"slices"

	"github.com/kvref/kvref/attention"
)

// The per-layer view of a configuration: what one layer's attention is. Every part of kvref
// that asks how a layer attends (the forward pass, the reference, the cache) asks here, so a
// model whose layers differ (Qwen2's first full layers, Gemma's interleaved sliding and
// global layers with their own RoPE) is one description, not special cases.

// LayerSpec is how one layer attends: its window and its rotary embedding.
type LayerSpec struct {
	// Window is the layer's attention window: the query at position p attends over
	// [p-Window+1, p]. 0: every earlier position.
	Window int
	// Rope is the layer's rotary embedding.
	Rope Rope
}

// LayerSpec describes layer l.
func (c Config) LayerSpec(l int) LayerSpec {
	s := LayerSpec{Window: c.Window(l), Rope: Rope{Base: c.RopeBase, Scaling: c.RopeScaling}}
	if c.LocalRope != nil && c.Sliding(l) {
		s.Rope = *c.LocalRope
	}
	return s
}

// Sliding reports whether layer l is one of the layers that attend over SlidingWindow
// (when the configuration has one).
func (c Config) Sliding(l int) bool {
	if c.SlidingLayers != nil {
		return l >= 0 && l < len(c.SlidingLayers) && c.SlidingLayers[l]
	}
	return l >= c.SlidingFromLayer
}

// Window is layer l's attention window: the query at position p attends over
// [p-Window+1, p]. 0: every earlier position.
func (c Config) Window(l int) int {
	if c.SlidingWindow > 0 && c.Sliding(l) {
		return c.SlidingWindow
	}
	return 0
}

// ReclaimWindow is the window beyond which no layer reads a position, so a cache whose
// blocks hold every layer can release a sequence's blocks that fell out of it:
// SlidingWindow when every layer slides, else 0 (a layer with full attention reads every
// position). A model with both kinds gets cache groups instead (engine.CacheGroups), whose
// sliding groups release blocks by their own window.
func (c Config) ReclaimWindow() int {
	for l := range c.Layers {
		if !c.Sliding(l) {
			return 0
		}
	}
	return c.SlidingWindow
}

// AttentionShape is layer l's attention as the attention package computes it: the heads,
// the window, the scale (QueryScalar) and the soft-cap.
func (c Config) AttentionShape(l int) attention.Shape {
	return attention.Shape{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim, Window: c.Window(l),
		QueryScalar: c.QueryScalar, SoftCap: float32(c.AttnSoftCap)}
}

// SlidingCount is how many layers attend over the window (0 without one).
func (c Config) SlidingCount() int {
	n := 0
	for l := range c.Layers {
		if c.Window(l) > 0 {
			n++
		}
	}
	return n
}

// validateGemma checks the fields of the Gemma block.
func (c Config) validateGemma() error {
	if c.SlidingLayers != nil {
		switch {
		case len(c.SlidingLayers) != c.Layers:
			return fmt.Errorf("model: the sliding-layer pattern has %d entries for %d layers; it needs one per layer", len(c.SlidingLayers), c.Layers)
		case c.SlidingFromLayer != 0:
			return fmt.Errorf("model: a sliding-layer pattern and a first sliding layer (%d) are two descriptions of the same thing; give one", c.SlidingFromLayer)
		case c.SlidingWindow == 0 && slices.Contains(c.SlidingLayers, true):
			return fmt.Errorf("model: the sliding-layer pattern marks sliding layers but the window is 0")
		}
	}
	if c.LocalRope != nil {
		if err := CheckRopeBase(c.LocalRope.Base); err != nil {
			return fmt.Errorf("model: the local (sliding-layer) rope base %w", err)
		}
		if err := c.LocalRope.Scaling.validate(); err != nil {
			return fmt.Errorf("%w (of the local rope)", err)
		}
	}
	if c.Activation != "" && c.Activation != ActivationGELUTanh {
		return fmt.Errorf("model: unsupported activation %q (kvref computes SwiGLU, and %q for Gemma)", c.Activation, ActivationGELUTanh)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"query_scalar", c.QueryScalar}, {"attention soft-cap", c.AttnSoftCap}, {"final soft-cap", c.FinalSoftCap}} {
		if err := CheckOptionalPositive(f.v); err != nil {
			return fmt.Errorf("model: %s %w", f.name, err)
		}
	}
	return nil
}
