package engine

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// gemmaModels are the Gemma variants: Gemma 2 (alternating sliding and global layers,
// soft-caps), Gemma 3 (five sliding layers at RoPE base 10000, a global one at 1e6 with
// linear scaling, q/k norms) and a Gemma 3 layout only a Hugging Face config can give
// (every third layer global, query scalar ≠ head dim). No window is shared by every layer
// (ReclaimWindow is 0): the cache groups of the sliding layers release blocks by their
// window, those of the global layers keep every block, and each layer attends over its own
// window.
func gemmaModels(t testing.TB) map[string]*model.Model {
	out := map[string]*model.Model{}
	for _, name := range []string{"gemma2", "gemma3", "gemma3-hf-layout"} {
		m, err := synth.Variants[name].Model()
		require.NoError(t, err)
		require.Zero(t, m.Config.ReclaimWindow(), "%s: a global layer keeps every block", name)
		require.Positive(t, m.Config.SlidingCount(), name)
		out[name] = m
	}
	return out
}

// TestGemmaChecksBitwiseWithHitsForksAndPreemption: on each Gemma variant, at block sizes
// 1, 4 and 16, with every step compared bit for bit with the cache-free reference (Check):
// a prompt three windows long and its greedy continuation; the same prompt again (a prefix
// hit longer than the window, reused by the sliding and the global layers alike) with two
// forked continuations; and three requests whose continuations a pool that holds two
// cannot all grow, so that one is preempted and recomputed. The outputs agree across block
// sizes. The pool has cache groups: the sliding ones release blocks, the global ones do not.
func TestGemmaChecksBitwiseWithHitsForksAndPreemption(t *testing.T) {
	t.Parallel()

	for name, m := range gemmaModels(t) {
		t.Run(name, func(t *testing.T) {
			w := m.Config.SlidingWindow
			prompt := make([]int, 3*w+3)
			for i := range prompt {
				prompt[i] = 7 + (i*31)%250
			}
			var first [][]int
			for _, bs := range []int{1, 4, 16} {
				e := newEngine(t, m, Config{BlockSize: bs, KType: quant.F32, VType: quant.F32, Threads: 2})
				toks, res := collect(t, e, greedy(prompt, 2*w))
				require.Len(t, toks, 2*w)
				require.Zero(t, res.PrefixHitTokens)
				// The sliding groups released what the sequence slid past; the global
				// layers' groups kept every block.
				st := e.Pool().Stats()
				require.NotEmpty(t, st.Groups, "a Gemma pool has cache groups")
				for _, g := range st.Groups {
					if g.Window > 0 {
						require.Positive(t, g.BlocksReclaimed, "block size %d group %d", bs, g.Group)
					} else {
						require.Zero(t, g.BlocksReclaimed, "block size %d group %d", bs, g.Group)
					}
				}

				forked := greedy(prompt, w)
				forked.N = 2
				forked.Sampling = Sampling{Temperature: 0.8, Seed: 5}
				_, res2 := collect(t, e, forked)
				require.GreaterOrEqual(t, res2.PrefixHitTokens, (len(prompt)-1)/bs*bs, "block size %d: the whole prompt's full blocks hit", bs)
				require.Greater(t, res2.PrefixHitTokens, w, "the hit is longer than the window")
				require.Len(t, res2.Outputs, 2)
				require.NoError(t, e.pool.Check())

				// Preemption: three requests with short prompts and long continuations in a
				// pool that holds two of them whole: all three are admitted, then decoding
				// runs out of blocks.
				short, gen := prompt[:w+2], 4*w
				// What one of them holds at its end, group by group: every block in a
				// full group, the window's in a sliding one (kvcache.Config.GroupBlocksAt).
				per := 0
				pc := e.Pool().Config()
				for g := range pc.NumGroups() {
					per += pc.GroupBlocksAt(g, len(short)+gen)
				}
				// Room for all three prompts and first tokens in every group (so all are
				// admitted), not for three whole sequences.
				blocks := max(2*per+1, 3*pc.NumGroups()*pc.BlocksFor(len(short)+1))
				require.Less(t, blocks, 3*per, "block size %d: the pool must be too small for all three", bs)
				small := newEngine(t, m, Config{BlockSize: bs, CacheBlocks: blocks, KType: quant.F32, VType: quant.F32, Threads: 2})
				s := small.NewScheduler(SchedulerConfig{WatermarkBlocks: -1})
				for i := range 3 {
					p := append([]int{1, 40 + i}, short[2:]...)
					_, err := s.Add(greedy(p, gen))
					require.NoError(t, err)
				}
				require.NoError(t, s.RunAll(func(Token) error { return nil }))
				for i := range 3 {
					require.NoError(t, s.Err(i))
					require.Len(t, s.Result(i).Outputs[0], gen)
				}
				require.Positive(t, s.Stats().Preemptions, "block size %d: the pool was too small for all three", bs)
				require.NoError(t, small.pool.Check())

				out := [][]int{res.Outputs[0], res2.Outputs[0], res2.Outputs[1], s.Result(0).Outputs[0]}
				if first == nil {
					first = out
					continue
				}
				require.Equal(t, first, out, "block size %d", bs)
			}
		})
	}
}

// microGemma are Gemma shapes small enough for thousands of random traces: Gemma 2's
// alternation with soft-caps that bite, and a Gemma 3 of three layers with every third
// global (a Hugging Face layout) and a query scalar that is not the head dim. Windows of 5
// cross the block boundaries of every block size tried.
var microGemma = []synth.Shape{
	{Name: "micro-gemma2", Arch: "gemma2", Dim: 16, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 8, Hidden: 24, Context: 512,
		RopeBase: 10000, Seed: 5, SlidingWindow: 5, AttnSoftCap: 1.5, FinalSoftCap: 2},
	{Name: "micro-gemma3", Arch: "gemma3", Dim: 16, Layers: 3, Heads: 4, KVHeads: 1, HeadDim: 8, Hidden: 24, Context: 512,
		RopeBase: 1e6, Seed: 6, SlidingWindow: 5, GlobalEvery: 3, QueryScalar: 12},
}

// TestGemmaCacheTracesProperty runs the random cache traces of TestCacheTracesProperty
// (shared prefixes, forks, batched prefill, frees, re-adds, eviction) on the Gemma micro
// shapes at block sizes 1, 4 and 16 with f32 and f16 caches: after every operation the
// pool's invariants hold and every logit is bit-identical to the cache-free reference, and
// at the end the oracle checks the stored keys and values and the attention (scale and
// soft-cap included) with its own float64 arithmetic.
func TestGemmaCacheTracesProperty(t *testing.T) {
	t.Parallel()

	for _, shape := range microGemma {
		m, err := shape.Model()
		require.NoError(t, err)
		require.Zero(t, m.Config.ReclaimWindow())
		for _, bs := range []int{1, 4, 16} {
			t.Run(fmt.Sprintf("%s/block%d", shape.Name, bs), func(t *testing.T) {
				batched := 0
				rapid.Check(t, func(rt *rapid.T) {
					ct := rapid.SampledFrom([]quant.CacheType{quant.F32, quant.F16}).Draw(rt, "cacheType")
					batched += runTrace(rt, m, bs, ct).batched
				})
				require.Positive(t, batched, "no trace ran a batched prefill")
			})
		}
	}
}

// TestGemmaLayersAttendOverTheirOwnWindow: the global layers of a Gemma model read every
// position, the sliding ones only their window: the same model with no window on any layer
// (each layer keeping its RoPE) gives the same bits up to the window and others past it,
// and a position past the window gets other logits when the first token changes (the
// global layers still read it).
func TestGemmaLayersAttendOverTheirOwnWindow(t *testing.T) {
	t.Parallel()

	m := gemmaModels(t)["gemma3"]
	w := m.Config.SlidingWindow
	tokens := make([]int, 3*w)
	for i := range tokens {
		tokens[i] = 3 + 5*i
	}
	allGlobal := *m
	allGlobal.Config.SlidingLayers = make([]bool, m.Config.Layers)
	r, rg := model.NewRunner(m, 1), model.NewRunner(&allGlobal, 1)
	defer r.Close()
	defer rg.Close()
	a, err := r.Reference(tokens, quant.F32, quant.F32, 0)
	require.NoError(t, err)
	b, err := rg.Reference(tokens, quant.F32, quant.F32, 0)
	require.NoError(t, err)
	for p := range tokens {
		require.Equal(t, p < w, equalBits(a[p], b[p]), "position %d", p)
	}
	changed := append([]int(nil), tokens...)
	changed[0] = 200
	c, err := r.Reference(changed, quant.F32, quant.F32, len(tokens)-1)
	require.NoError(t, err)
	require.False(t, equalBits(a[len(tokens)-1], c[0]), "the global layers still read position 0")
}

func equalBits(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
