package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
)

func ramp(start, n int) []int {
	out := []int{1}
	for i := 0; len(out) < n; i++ {
		out = append(out, 3+(start+i*7)%250)
	}
	return out
}

// TestCacheRegressionTraces are named traces for the classic prefix-cache bugs, run at
// several block sizes; every step is checked bitwise against the reference by traceRunner.
func TestCacheRegressionTraces(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	for _, bs := range []int{1, 2, 4, 16} {
		for _, tc := range []struct {
			name string
			run  func(t *testing.T, r *traceRunner)
		}{
			{"prefix exactly one block", func(t *testing.T, r *traceRunner) {
				a := ramp(0, bs+5)
				first := r.add(a)
				s, hit := r.addHit(append(append([]int(nil), a[:bs]...), 9, 9, 9))
				require.Equal(t, bs, hit, "the shared first block is reused")
				require.Equal(t, first.Table()[0], s.Table()[0], "the same block, not a copy")
				require.EqualValues(t, bs, r.e.pool.Stats().PrefixHitTokens)
			}},
			{"prefix one block minus one", func(t *testing.T, r *traceRunner) {
				a := ramp(0, 3*bs+2)
				r.add(a)
				r.add(append(append([]int(nil), a[:2*bs-1]...), 6)) // one token short of two blocks
				require.EqualValues(t, bs, r.e.pool.Stats().PrefixHitTokens)
			}},
			{"prefix one block plus one", func(t *testing.T, r *traceRunner) {
				a := ramp(0, 3*bs+2)
				r.add(a)
				r.add(append(append([]int(nil), a[:bs+1]...), 5, 5))
				require.EqualValues(t, bs*((bs+1)/bs), r.e.pool.Stats().PrefixHitTokens)
			}},
			{"whole prompt cached", func(t *testing.T, r *traceRunner) {
				a := ramp(3, 2*bs)
				first := r.add(a)
				s, hit := r.addHit(append([]int(nil), a...))
				// Everything but the last token could be reused, but only whole blocks are:
				// the last block is recomputed so that the last token has logits.
				require.Equal(t, bs*((2*bs-1)/bs), hit)
				require.Equal(t, first.Table()[0], s.Table()[0], "the first block is reused")
				require.NotEqual(t, first.Table()[1], s.Table()[1], "the last block is recomputed into a block of its own")
				require.EqualValues(t, hit, r.e.pool.Stats().PrefixHitTokens)
			}},
			{"fork mid-block then divergent appends", func(t *testing.T, r *traceRunner) {
				prompt := ramp(1, bs+bs/2+1)
				a := r.add(prompt)
				f := r.fork(a)
				r.appendTokens(a, 10, 11)
				r.appendTokens(f, 20, 21, 22)
				a.Append(12)
				f.Append(23)
				r.run(a, f)
				want := 0
				if len(prompt)%bs != 0 {
					want = 1 // the shared partial block is copied once, by the first writer
				}
				require.EqualValues(t, want, r.e.pool.Stats().CowCopies)
			}},
			{"evict then re-admit the same prefix", func(t *testing.T, r *traceRunner) {
				a := ramp(2, 2*bs+1)
				s := r.add(a)
				r.free(s)
				// Fill the pool with other prompts until a's blocks are evicted.
				for i := 0; r.e.pool.Stats().Evictions < 2; i++ {
					o := r.add(ramp(100+i*13, 2*bs+1))
					r.free(o)
					require.Less(t, i, 100, "no eviction happened")
				}
				hits := r.e.pool.Stats().PrefixHitTokens
				r.add(append([]int(nil), a...))
				r.add(append([]int(nil), a...)) // second pass hits what the first re-computed
				require.Greater(t, r.e.pool.Stats().PrefixHitTokens, hits)
			}},
		} {
			t.Run(fmt.Sprintf("%s/block%d", tc.name, bs), func(t *testing.T) {
				r := newTraceRunner(t, m, bs, max(8, 64/bs), quant.F32)
				defer r.close()
				tc.run(t, r)
				for _, s := range append(r.live[:0:0], r.live...) {
					r.free(s)
				}
				require.NoError(t, r.e.pool.Check())
			})
		}
	}
}
