package kvcache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
)

// gemma3Windows is Gemma 3's layer pattern for n layers: every sixth layer global, the
// others over window w.
func gemma3Windows(n, w int) []int {
	out := make([]int, n)
	for l := range out {
		if (l+1)%6 != 0 {
			out[l] = w
		}
	}
	return out
}

func TestGroupLayersSplitsKindsIntoEqualGroups(t *testing.T) {
	t.Parallel()

	// Gemma 3 1B: 26 layers, 4 global (5, 11, 17, 23) and 22 sliding: gcd 2, so 2 full
	// groups and 11 sliding ones of 2 layers each, full first.
	gs := GroupLayers(gemma3Windows(26, 512))
	require.Len(t, gs, 13)
	require.Equal(t, Group{Layers: []int{5, 11}, Window: 0}, gs[0])
	require.Equal(t, Group{Layers: []int{17, 23}, Window: 0}, gs[1])
	require.Equal(t, Group{Layers: []int{0, 1}, Window: 512}, gs[2])
	require.Equal(t, Group{Layers: []int{4, 6}, Window: 512}, gs[4])
	// Gemma 2: alternating, 13 and 13: two groups of 13.
	alt := make([]int, 26)
	for l := 0; l < 26; l += 2 {
		alt[l] = 4096
	}
	gs = GroupLayers(alt)
	require.Len(t, gs, 2)
	require.Equal(t, []int{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25}, gs[0].Layers)
	require.Equal(t, 4096, gs[1].Window)
	// Uniform models are one group: no Groups at all.
	require.Nil(t, GroupLayers(make([]int, 22)))
	require.Nil(t, GroupLayers([]int{4096, 4096, 4096}))

	for name, groups := range map[string][]Group{
		"unequal":      {{Layers: []int{0}}, {Layers: []int{1, 2}, Window: 4}},
		"twice":        {{Layers: []int{0, 1}}, {Layers: []int{1, 2}, Window: 4}},
		"missing":      {{Layers: []int{0}}, {Layers: []int{1}, Window: 4}},
		"out of range": {{Layers: []int{0, 1}}, {Layers: []int{2, 3}, Window: 4}},
	} {
		err := (Config{Layers: 3, KVHeads: 1, HeadDim: 4, BlockSize: 2, NumBlocks: 4, Groups: groups}).Validate()
		require.Error(t, err, name)
	}
}

// newGroupPool is a pool of two one-layer groups: layer 0 full, layer 1 sliding over w.
func newGroupPool(t *testing.T, blockSize, blocks, w int) *Pool {
	t.Helper()
	p, err := NewPool(Config{Layers: 2, KVHeads: 1, HeadDim: 4, BlockSize: blockSize, NumBlocks: blocks, ModelID: "groups",
		Groups: []Group{{Layers: []int{0}}, {Layers: []int{1}, Window: w}}})
	require.NoError(t, err)
	return p
}

// decode computes s's tokens one at a time, sliding after each as the engine does.
func decode(t *testing.T, p *Pool, s *Sequence) {
	t.Helper()
	for s.Computed() < s.Len() {
		require.NoError(t, reserve(p, s, 1))
		require.NoError(t, p.Commit(s, 1))
		p.Slide(s)
		require.NoError(t, p.Check())
	}
}

// evict drops one cached block as allocation under pressure would.
func evict(t *testing.T, p *Pool, id int) {
	t.Helper()
	require.True(t, p.blocks[id].inLRU, "block %d is cached", id)
	p.lruRemove(id)
	p.unindex(id)
	p.blocks[id].filled = 0
	p.free = append(p.free, id)
	require.NoError(t, p.Check())
}

func TestGroupsSlideHitAndShortenPerGroup(t *testing.T) {
	t.Parallel()

	const bs, w = 2, 4
	p := newGroupPool(t, bs, 40, w)
	require.Equal(t, int64(bs*1*2*4*4), p.Config().BytesPerBlock(), "a block holds one layer's K and V")
	require.Equal(t, int64(40)*p.Config().BytesPerBlock(), p.AllocatedBytes())

	var rec recorder
	p.SetObserver(func(e Event) { rec.events = append(rec.events, e) })
	a := p.AddSequence(seqTokens(13, 0), "")
	decode(t, p, a)
	full, slide := a.GroupTable(0), a.GroupTable(1)
	require.Len(t, full, 7)
	require.NotContains(t, full, Hole, "the full group keeps every block")
	// The next token (13) reads [10, 13]: blocks 0..4 of the sliding group are released.
	require.Equal(t, []int{Hole, Hole, Hole, Hole, Hole}, slide[:5])
	require.NotEqual(t, Hole, slide[5])
	st := p.Stats()
	require.Len(t, st.Groups, 2)
	require.Equal(t, 7, st.Groups[0].BlocksUsed)
	require.Equal(t, 2, st.Groups[1].BlocksUsed)
	require.Equal(t, int64(5), st.Groups[1].BlocksReclaimed)
	require.Equal(t, 5, st.Groups[1].BlocksCached, "released full blocks stay cached for hits")
	for _, e := range rec.take() {
		if e.Kind == Reclaimed {
			require.Equal(t, 1, e.Group, "only the sliding group releases")
		}
	}
	p.Free(a)
	require.NoError(t, p.Check())

	// A prompt of 13 tokens: a hit of 6 blocks (12 tokens); the sliding group needs only
	// blocks covering [12-4+1, 12) = [9, 12): blocks 4 and 5; the others are holes.
	b := p.AddSequence(seqTokens(13, 0), "")
	require.Equal(t, 12, b.Computed())
	require.NotContains(t, b.GroupTable(0), Hole)
	require.Equal(t, []int{Hole, Hole, Hole, Hole}, b.GroupTable(1)[:4])
	var hits [2]int
	for _, e := range rec.take() {
		if e.Kind == PrefixHit {
			hits[e.Group]++
		}
	}
	require.Equal(t, [2]int{6, 2}, hits, "PrefixHit events per group")
	decode(t, p, b)
	hashes := b.hashes
	p.Free(b)

	// Release the sliding group's block 5: the hit of 6 blocks cannot be served; 5 blocks
	// (the token at 10 reads [7, 10]: blocks 3 and 4) can.
	slide5 := p.index[indexKey{1, hashes[5]}]
	evict(t, p, slide5)
	hit, _ := p.PrefixHit(seqTokens(13, 0), "")
	require.Equal(t, 10, hit, "a released sliding block shortens the hit")
	// And block 3 too: 5 needs 3 and 4; 4 needs 2 and 3; 3 needs 1 and 2.
	evict(t, p, p.index[indexKey{1, hashes[3]}])
	c := p.AddSequence(seqTokens(13, 0), "")
	require.Equal(t, 6, c.Computed())
	require.Equal(t, []int{Hole, c.GroupTable(1)[1], c.GroupTable(1)[2]}, c.GroupTable(1))
	require.NoError(t, p.Check())
	decode(t, p, c)
	require.NoError(t, p.Check())
	// The full group, unlike the sliding one, needs every block: dropping its block 0
	// leaves nothing to hit.
	p.Free(c)
	evict(t, p, p.index[indexKey{0, hashes[0]}])
	require.Zero(t, p.CachedPrefix(seqTokens(13, 0), ""))
}

func TestGroupsReserveCountsEveryGroupAtomically(t *testing.T) {
	t.Parallel()

	p := newGroupPool(t, 2, 5, 2)
	a := p.AddSequence(seqTokens(5, 0), "")
	_, err := p.Reserve(a, 5) // 3 blocks in each group: 6 > 5
	require.ErrorIs(t, err, ErrOutOfBlocks)
	require.Empty(t, a.GroupTable(0))
	require.Empty(t, a.GroupTable(1))
	require.Equal(t, 5, p.Available(), "a failed Reserve takes nothing")
	r, err := p.Reserve(a, 4)
	require.NoError(t, err)
	require.Equal(t, []int{0, 0, 1, 1}, r.NewGroups)
	require.NoError(t, p.Commit(a, 4))
	p.Slide(a) // the next token (4) reads [3, 4]: sliding block 0 goes
	require.Equal(t, Hole, a.GroupTable(1)[0])
	// Fork, then write: copy-on-write in both groups (the sliding group's live block only).
	f := p.Fork(a)
	f.Append(9)
	a.Append(8)
	r, err = p.Reserve(f, 1)
	require.NoError(t, err)
	require.Len(t, r.New, 2, "position 4 starts block 2 in both groups")
	require.NoError(t, p.Check())
	_, err = p.Reserve(a, 1)
	require.ErrorIs(t, err, ErrOutOfBlocks)
	require.NoError(t, p.Check())
}

func TestGroupBlocksAtIsWhatThePoolHolds(t *testing.T) {
	t.Parallel()

	for _, bs := range []int{1, 3, 4, 16} {
		const w, ctx = 7, 200
		cfg := Config{Layers: 6, KVHeads: 1, HeadDim: 4, BlockSize: bs, NumBlocks: 600, KType: quant.F16, VType: quant.F16,
			Groups: GroupLayers(gemma3Windows(6, w))}
		p, err := NewPool(cfg)
		require.NoError(t, err)
		s := p.AddSequence(seqTokens(ctx, 0), "")
		for s.Computed() < ctx {
			require.NoError(t, reserve(p, s, 1))
			if s.Computed() == ctx-1 { // the step computing the last token
				st := p.Stats()
				for g := range cfg.NumGroups() {
					require.Equal(t, cfg.GroupBlocksAt(g, ctx), st.Groups[g].BlocksUsed, "block size %d group %d", bs, g)
				}
			}
			require.NoError(t, p.Commit(s, 1))
			p.Slide(s)
		}
	}
}
