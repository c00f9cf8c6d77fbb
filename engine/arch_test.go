package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
)

// TestEveryArchitectureChecksBitwise runs every architecture variant (GQA and MHA Llama,
// Llama 3 and linear RoPE scaling, Qwen2 biases, Qwen3 q/k norm with an explicit head_dim)
// through the cache with --check at two block sizes: bit-identical to the reference and to
// each other.
func TestEveryArchitectureChecksBitwise(t *testing.T) {
	t.Parallel()

	for name, shape := range synth.Variants {
		t.Run(name, func(t *testing.T) {
			m, err := shape.Model()
			require.NoError(t, err)
			var first []Token
			for _, bs := range []int{1, 16} {
				e := newEngine(t, m, Config{BlockSize: bs})
				toks, _ := collect(t, e, greedy(ramp(4, 40), 24))
				if first == nil {
					first = toks
					continue
				}
				require.Equal(t, first, toks)
			}
		})
	}
}
