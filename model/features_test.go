package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFeatures: each departure from the plain Llama block is named, in a fixed order.
func TestFeatures(t *testing.T) {
	t.Parallel()

	require.Empty(t, Config{}.Features())
	require.Equal(t, []string{"tied output", "q/k/v biases", "q/k norm", "sliding window 64"},
		Config{Tied: true, QKVBias: true, QKNorm: true, SlidingWindow: 64}.Features())
	require.Equal(t, []string{"q/k norm"}, Config{QKNorm: true}.Features())
	gemma3 := Config{Layers: 6, Tied: true, QKNorm: true, SlidingWindow: 512, SlidingLayers: GemmaPattern(6, 6),
		LocalRope: &Rope{Base: 10000}, EmbedScale: true, PostNorms: true, Activation: ActivationGELUTanh, QueryScalar: 256}
	require.Equal(t, []string{"tied output", "q/k norm", "sliding window 512 on 5 of 6 layers", "sliding layers' rope base 10000",
		"embedding ×√dim", "post-norms", "GELU-tanh gate", "query scale 1/√256"}, gemma3.Features())
	require.Equal(t, []string{"sliding window 8 on 1 of 2 layers", "attention soft-cap 50", "logit soft-cap 30"},
		Config{Layers: 2, SlidingWindow: 8, SlidingLayers: GemmaPattern(2, 2), AttnSoftCap: 50, FinalSoftCap: 30}.Features())
}
