package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
)

// TestLongPrefillChunkChecksBitwise prefills long prompts in one chunk, which takes the
// batched attention path (keys decoded once, scores in blocks of queries against the
// causal triangle), from position 0 and after a prefix hit, in the f32 cache and in
// quantized ones: every generated token's logits are bit-identical to the cache-free
// reference, which attends row by row.
func TestLongPrefillChunkChecksBitwise(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	long := ramp(5, 300)
	shared := append(append([]int{}, long[:170]...), ramp(9, 90)[1:]...) // shares 170 tokens with long
	for _, ct := range []quant.CacheType{quant.F32, quant.F16, quant.Int8} {
		t.Run(ct.String(), func(t *testing.T) {
			e := newEngine(t, m, Config{BlockSize: 16, KType: ct, VType: ct})
			cfg := SchedulerConfig{MaxBatchTokens: 512}
			for i, prompt := range [][]int{long, shared} {
				var toks []Token
				res, err := e.GenerateWith(cfg, greedy(prompt, 6), func(tk Token) error {
					toks = append(toks, tk)
					return nil
				})
				require.NoError(t, err) // Check: a logit differing from the reference fails here
				require.Len(t, toks, 6)
				if i == 1 {
					require.Equal(t, 160, res.PrefixHitTokens, "the second prompt reuses the first one's ten full blocks")
				}
			}
		})
	}
}
