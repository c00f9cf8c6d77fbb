package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// TestPoolHoldsWhatThePlanSaysAt32k: a synthetic Gemma-3-shaped model (12 layers, every
// sixth global: 10 sliding and 2 global, so 6 cache groups of 2 layers) with a window of
// 40, driven through the engine's reserve/commit/slide protocol to 32768 tokens of context
// in chunks: while the step computing the last token runs, every cache group holds, block
// for block, what `kvref plan` computes for the model's shape (internal/plan, an
// independent implementation of the formula), and the pool's bytes are the plan's. (The
// forward pass does not change what blocks a sequence holds; running 32768 tokens through
// it would only make the test slow, and the bitwise checks run elsewhere.)
func TestPoolHoldsWhatThePlanSaysAt32k(t *testing.T) {
	const ctx, w = 32768, 40
	m, err := synth.Shape{Name: "gemma3-32k", Arch: "gemma3", Dim: 16, Layers: 12, Heads: 2, KVHeads: 1, HeadDim: 8, Hidden: 24,
		Context: ctx, RopeBase: 1e6, Seed: 32, SlidingWindow: w}.Model()
	require.NoError(t, err)
	for _, bs := range []int{1, 4, 16, 48} {
		t.Run(fmt.Sprintf("block%d", bs), func(t *testing.T) {
			e := newEngine(t, m, Config{Context: ctx, BlockSize: bs, KType: quant.F16, VType: quant.F16, Threads: 1})
			pc := e.Pool().Config()
			require.Len(t, pc.Groups, 6)
			require.Equal(t, 2, pc.BlockLayers())

			tokens := make([]int, ctx)
			for i := range tokens {
				tokens[i] = 3 + i%200
			}
			kv := e.Pool().AddSequence(tokens, "")
			for kv.Computed() < ctx-1 {
				sp := []span{{kv: kv, n: min(1000, ctx-1-kv.Computed())}}
				_, err := e.reserve(sp)
				require.NoError(t, err)
				require.NoError(t, e.Pool().Commit(kv, sp[0].n))
				e.reclaim(kv)
			}
			_, err := e.reserve([]span{{kv: kv, n: 1}}) // the step computing position ctx-1
			require.NoError(t, err)
			require.NoError(t, e.Pool().Check())

			r, err := plan.Compute(plan.Input{Shape: m.Config.PlanShape(), KType: quant.F16, VType: quant.F16, Context: ctx, BlockSize: bs, Memory: 1 << 30})
			require.NoError(t, err)
			require.Len(t, r.Groups, 2)
			st := e.Pool().Stats()
			held := map[int]int{} // window → blocks held by its groups
			for _, g := range st.Groups {
				held[g.Window] += g.BlocksUsed
				require.Equal(t, pc.GroupBlocksAt(g.Group, ctx), g.BlocksUsed, "group %d (window %d)", g.Group, g.Window)
			}
			for _, g := range r.Groups {
				require.Equal(t, g.Blocks, held[g.Window], "window %d: the plan's blocks", g.Window)
			}
			require.Equal(t, r.BlocksPerSequence, st.BlocksUsed)
			require.Equal(t, r.BytesPerBlock, st.BytesPerBlock)
			require.Equal(t, r.BlockBytesPerSequence, st.BytesInUse, "the pool holds the plan's bytes")
			if ctx%bs == 0 && w%bs == 0 {
				require.Equal(t, r.BytesPerSequence, st.BytesInUse, "whole blocks: the token formula exactly")
			}
			// Without the window every group would hold ceil(ctx/B) blocks.
			require.Less(t, st.BytesInUse*5, int64(pc.NumGroups())*int64(pc.BlocksFor(ctx))*st.BytesPerBlock)
		})
	}
}

// TestValidateCountsEveryGroup: a prompt's blocks are needed once per cache group (the
// full groups' all of them, the sliding ones' two windows at most): a pool with room for
// one group's share is refused up front, one with room for every group's is not.
func TestValidateCountsEveryGroup(t *testing.T) {
	m, err := synth.Variants["gemma3"].Model() // 7 layers: 1 global, 6 sliding (window 8): 7 groups of 1
	require.NoError(t, err)
	prompt := make([]int, 40)
	for i := range prompt {
		prompt[i] = 5 + i
	}
	const bs = 4
	full, sliding := (len(prompt)+1+bs-1)/bs, (2*8+bs-1)/bs+1 // 11 and 5 blocks
	e := newEngine(t, m, Config{BlockSize: bs, CacheBlocks: full + 6*sliding - 1, Threads: 1})
	require.Len(t, e.Pool().Config().Groups, 7)
	var small *CacheTooSmallError
	require.ErrorAs(t, e.Validate(greedy(prompt, 4)), &small)
	require.Equal(t, full+6*sliding, small.Need)
	e = newEngine(t, m, Config{BlockSize: bs, CacheBlocks: full + 6*sliding, Threads: 1})
	require.NoError(t, e.Validate(greedy(prompt, 4)))
	_, res := collect(t, e, greedy(prompt, 4))
	require.Len(t, res.Outputs[0], 4, "and it runs in that pool, checked bit for bit")
}
