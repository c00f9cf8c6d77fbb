package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFeatures: each departure from the plain Llama block is named, in a fixed order.
func TestFeatures(t *testing.T) {
	require.Empty(t, Config{}.Features())
	require.Equal(t, []string{"tied output", "q/k/v biases", "q/k norm", "sliding window 64"},
		Config{Tied: true, QKVBias: true, QKNorm: true, SlidingWindow: 64}.Features())
	require.Equal(t, []string{"q/k norm"}, Config{QKNorm: true}.Features())
}
