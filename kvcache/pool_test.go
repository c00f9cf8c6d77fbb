package kvcache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
)

func newTestPool(t *testing.T, blockSize, blocks int) *Pool {
	t.Helper()
	p, err := NewPool(Config{Layers: 2, KVHeads: 2, HeadDim: 4, BlockSize: blockSize, NumBlocks: blocks, ModelID: "test"})
	require.NoError(t, err)
	return p
}

// compute reserves and commits all uncomputed tokens of s, as a forward pass would.
func compute(t *testing.T, p *Pool, s *Sequence) {
	t.Helper()
	n := s.Len() - s.Computed()
	require.NoError(t, reserve(p, s, n))
	require.NoError(t, p.Commit(s, n))
	require.NoError(t, p.Check())
}

// reserve is Reserve for tests that only care about its error.
func reserve(p *Pool, s *Sequence, n int) error {
	_, err := p.Reserve(s, n)
	return err
}

func seqTokens(n, offset int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = offset + i
	}
	return out
}

func TestBytesPerTokenFollowsTheFormula(t *testing.T) {
	t.Parallel()

	for _, ct := range []quant.CacheType{quant.F32, quant.F16, quant.BF16} {
		cfg := Config{Layers: 32, KVHeads: 8, HeadDim: 128, BlockSize: 16, NumBlocks: 2, KType: ct, VType: ct}
		elem := map[quant.CacheType]int64{quant.F32: 4, quant.F16: 2, quant.BF16: 2}[ct]
		require.Equal(t, 2*32*8*128*elem, cfg.BytesPerToken(), ct.String())
		p, err := NewPool(cfg)
		require.NoError(t, err)
		require.Equal(t, int64(2*16)*cfg.BytesPerToken(), p.AllocatedBytes())
	}
	// A Llama-2-7B-like shape with GQA: 32 layers, 8 KV heads of 128, fp16 → 128 KiB per token.
	cfg := Config{Layers: 32, KVHeads: 8, HeadDim: 128, KType: quant.F16, VType: quant.F16}
	require.Equal(t, int64(128<<10), cfg.BytesPerToken())
}

func TestValidateRejectsBadConfigs(t *testing.T) {
	t.Parallel()

	for name, cfg := range map[string]Config{
		"zero block size": {Layers: 1, KVHeads: 1, HeadDim: 4, BlockSize: 0, NumBlocks: 1},
		"no blocks":       {Layers: 1, KVHeads: 1, HeadDim: 4, BlockSize: 4, NumBlocks: 0},
		"no layers":       {Layers: 0, KVHeads: 1, HeadDim: 4, BlockSize: 4, NumBlocks: 1},
		"huge":            {Layers: 1000, KVHeads: 64, HeadDim: 256, BlockSize: 1024, NumBlocks: 1 << 20},
	} {
		_, err := NewPool(cfg)
		require.Error(t, err, name)
	}
}

func TestPrefixSharingReusesFullBlocksOnly(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 4, 16)
	a := p.AddSequence(seqTokens(10, 100), "")
	require.Zero(t, a.Computed())
	compute(t, p, a)
	require.Len(t, a.Table(), 3)

	// Same first 9 tokens: two full blocks (8 tokens) are shared.
	b := p.AddSequence(append(seqTokens(9, 100), 7), "")
	require.Equal(t, 8, b.Computed())
	require.Equal(t, a.Table()[:2], b.Table())
	compute(t, p, b)
	require.NotEqual(t, a.Table()[2], b.Table()[2])
	st := p.Stats()
	require.EqualValues(t, 8, st.PrefixHitTokens)
	require.EqualValues(t, 20, st.PromptTokens)
	require.Equal(t, 2, st.BlocksShared)

	// A different first token shares nothing, even with identical later tokens.
	c := p.AddSequence(append([]int{99}, seqTokens(9, 101)...), "")
	require.Zero(t, c.Computed())
	require.NoError(t, p.Check())
}

func TestWholePromptCachedStillComputesLastToken(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ blockSize, prompt, wantHit int }{
		{4, 8, 4},  // exactly two blocks: the last block is recomputed so the last token has logits
		{4, 9, 8},  // one token past two blocks
		{4, 7, 4},  // one token short of two blocks
		{4, 4, 0},  // one block: nothing reusable
		{1, 5, 4},  // block size 1: everything but the last token
		{16, 5, 0}, // shorter than a block
	} {
		p := newTestPool(t, tc.blockSize, 32)
		a := p.AddSequence(seqTokens(tc.prompt, 0), "")
		compute(t, p, a)
		b := p.AddSequence(seqTokens(tc.prompt, 0), "")
		require.Equal(t, tc.wantHit, b.Computed(), "block size %d, prompt %d", tc.blockSize, tc.prompt)
		require.Less(t, b.Computed(), b.Len())
		compute(t, p, b)
	}
}

func TestForkCopiesOnWriteMidBlock(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 4, 16)
	a := p.AddSequence(seqTokens(6, 0), "")
	compute(t, p, a)
	f := p.Fork(a)
	require.Equal(t, a.Table(), f.Table())
	require.NoError(t, p.Check())

	// Fill a's data so the copy can be observed.
	shared := a.Table()[1]
	p.KRow(0, shared, 1)[0] = 42

	f.Append(1000)
	compute(t, p, f) // position 6 falls in the shared second block: copy first
	require.Equal(t, a.Table()[0], f.Table()[0])
	require.NotEqual(t, shared, f.Table()[1])
	require.EqualValues(t, 1, p.Stats().CowCopies)
	require.Equal(t, byte(42), p.KRow(0, f.Table()[1], 1)[0], "the copy holds the parent's slots")

	a.Append(2000)
	compute(t, p, a) // now a is the block's only owner: no copy
	require.EqualValues(t, 1, p.Stats().CowCopies)
	require.Equal(t, shared, a.Table()[1])
}

func TestFreeKeepsFullBlocksCachedAndEvictsLRU(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 2, 4)
	a := p.AddSequence(seqTokens(5, 0), "") // blocks: [0 1] [2 3] [4]
	compute(t, p, a)
	p.Free(a)
	st := p.Stats()
	require.Equal(t, 2, st.BlocksCached)
	require.Equal(t, 2, st.BlocksFree)
	require.NoError(t, p.Check())

	// Re-adding the prompt hits both cached blocks.
	b := p.AddSequence(seqTokens(5, 0), "")
	require.Equal(t, 4, b.Computed())
	compute(t, p, b)
	first, second := b.Table()[0], b.Table()[1]
	p.Free(b)

	// A different prompt needing 4 blocks must evict both cached blocks, later one first:
	// Free releases a table from its end, so the prefix's second block is the least
	// recently used. Allocation takes the free blocks, then evicts in LRU order.
	c := p.AddSequence(seqTokens(7, 50), "")
	require.NoError(t, reserve(p, c, 7))
	require.EqualValues(t, 2, p.Stats().Evictions)
	require.Len(t, c.Table(), 4)
	require.Equal(t, []int{second, first}, c.Table()[2:], "evicted in LRU order: the prefix's later block first")
	require.NoError(t, p.Commit(c, 7))
	require.NoError(t, p.Check())

	// Nothing free or evictable: a typed error and no change.
	d := p.AddSequence(seqTokens(3, 500), "")
	before := p.Stats()
	_, err := p.Reserve(d, 3)
	require.ErrorIs(t, err, ErrOutOfBlocks)
	require.Equal(t, before, p.Stats())
	require.NoError(t, p.Check())
}

func TestCheckFindsCorruption(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 2, 8)
	a := p.AddSequence(seqTokens(5, 0), "")
	compute(t, p, a)
	p.blocks[a.tables[0][0]].ref++
	require.ErrorContains(t, p.Check(), "ref")
	p.blocks[a.tables[0][0]].ref--
	require.NoError(t, p.Check())
	p.blocks[a.tables[0][0]].tokens[1] = 77
	require.ErrorContains(t, p.Check(), "indexed with other tokens")
	p.blocks[a.tables[0][0]].tokens[1] = 1
	p.free = append(p.free, a.tables[0][2])
	require.ErrorContains(t, p.Check(), "free")
}

func TestHashCollisionNeverSharesWrongBlock(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 2, 8)
	a := p.AddSequence(seqTokens(5, 0), "")
	compute(t, p, a)
	// Simulate a collision: make the index claim that block 0 holds other tokens' hash.
	other := []int{9, 9}
	h := chainHash(p.root, other)
	p.index[indexKey{0, h}] = a.tables[0][0]
	b := p.AddSequence([]int{9, 9, 1}, "")
	require.Zero(t, b.Computed(), "the stored tokens differ, so the hit must be refused")
	delete(p.index, indexKey{0, h})
}

func TestSaltSeparatesModels(t *testing.T) {
	t.Parallel()

	cfg := Config{Layers: 1, KVHeads: 1, HeadDim: 4, BlockSize: 4, NumBlocks: 4}
	a, b := cfg, cfg
	a.ModelID, b.ModelID = "model-a", "model-b"
	require.NotEqual(t, rootHash(a), rootHash(b))
	c := cfg
	c.KType = quant.F16
	require.NotEqual(t, rootHash(cfg), rootHash(c), "the cache type is part of the hash")
}

func TestFlushDropsCachedBlocksOnly(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 2, 8)
	a := p.AddSequence(seqTokens(5, 0), "")
	compute(t, p, a)
	b := p.AddSequence(seqTokens(5, 100), "")
	compute(t, p, b)
	p.Free(a)
	require.Equal(t, 2, p.Stats().BlocksCached)
	require.Equal(t, 2, p.Flush())
	st := p.Stats()
	require.Zero(t, st.BlocksCached)
	require.Equal(t, 3, st.BlocksUsed)
	require.NoError(t, p.Check())
	require.Zero(t, p.AddSequence(seqTokens(5, 0), "").Computed(), "flushed blocks no longer hit")
	require.Equal(t, 4, p.AddSequence(seqTokens(5, 100), "").Computed(), "blocks in use still hit")
}

func TestCacheSaltSeparatesSequences(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 2, 16)
	a := p.AddSequence(seqTokens(7, 0), "tenant-a")
	compute(t, p, a)
	require.Zero(t, p.AddSequence(seqTokens(7, 0), "tenant-b").Computed(), "another salt shares nothing")
	require.Zero(t, p.AddSequence(seqTokens(7, 0), "").Computed(), "no salt shares nothing with a salt")
	require.Equal(t, 6, p.CachedPrefix(seqTokens(7, 0), "tenant-a"))
	b := p.AddSequence(seqTokens(7, 0), "tenant-a")
	require.Equal(t, 6, b.Computed())
	f := p.Fork(b)
	f.Append(99)
	compute(t, p, f)
	require.NoError(t, p.Check())
}

// TestRowsAreConsecutiveRowsOfOneBlock: KRows and VRows are the KRow and VRow of each slot
// of the run back to back, and a run that leaves its block panics instead of reading the
// next block's rows.
func TestRowsAreConsecutiveRowsOfOneBlock(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 4, 3)
	for b := range 3 {
		for slot := range 4 {
			k := make([]float32, 8)
			for i := range k {
				k[i] = float32(100*b + 10*slot + i)
			}
			p.WriteKV(1, b, slot, k, k)
		}
	}
	for _, run := range [][2]int{{0, 4}, {1, 2}, {3, 1}, {2, 0}} {
		slot, count := run[0], run[1]
		var wantK, wantV []byte
		for s := slot; s < slot+count; s++ {
			wantK = append(wantK, p.KRow(1, 2, s)...)
			wantV = append(wantV, p.VRow(1, 2, s)...)
		}
		require.Equal(t, wantK, append([]byte(nil), p.KRows(1, 2, slot, count)...), "K slots %v", run)
		require.Equal(t, wantV, append([]byte(nil), p.VRows(1, 2, slot, count)...), "V slots %v", run)
	}
	require.Panics(t, func() { p.KRows(1, 1, 2, 3) })
	require.Panics(t, func() { p.VRows(1, 1, -1, 2) })
}
