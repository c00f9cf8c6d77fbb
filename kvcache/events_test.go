package kvcache

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// recorder collects a pool's events.
type recorder struct{ events []Event }

func (r *recorder) kinds() []EventKind {
	var out []EventKind
	for _, e := range r.events {
		out = append(out, e.Kind)
	}
	return out
}

func (r *recorder) take() []Event {
	e := r.events
	r.events = nil
	return e
}

// TestReserveReportsWhatItDid: a new block, a copy-on-write and an eviction each come back
// in the Reservation and as events, with the numbers a viewer needs, and agree with the
// pool's own state and counters afterwards.
func TestReserveReportsWhatItDid(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 4, 4)
	var rec recorder
	p.SetObserver(func(e Event) { rec.events = append(rec.events, e) })

	a := p.AddSequence(seqTokens(6, 0), "")
	r, err := p.Reserve(a, 6)
	require.NoError(t, err)
	require.Equal(t, a.Table(), r.New, "two new blocks for six tokens")
	require.Empty(t, r.Copies)
	require.Empty(t, r.Evictions)
	require.NoError(t, p.Commit(a, 6))
	ev := rec.take()
	require.Equal(t, []EventKind{Allocated, Allocated, Indexed}, []EventKind{ev[0].Kind, ev[1].Kind, ev[2].Kind})
	require.Equal(t, []int{0, 1}, []int{ev[0].Index, ev[1].Index})
	require.Equal(t, a.Table()[0], ev[2].Block, "the full first block joins the index")

	// A fork shares both blocks; its first write lands mid-block in the shared second block:
	// copy-on-write of the two filled slots.
	f := p.Fork(a)
	require.Equal(t, []EventKind{Forked, Forked}, rec.kinds())
	rec.take()
	f.Append(100)
	r, err = p.Reserve(f, 1)
	require.NoError(t, err)
	require.Empty(t, r.New)
	require.Len(t, r.Copies, 1)
	c := r.Copies[0]
	require.Equal(t, a.Table()[1], c.From)
	require.Equal(t, f.Table()[1], c.Block)
	require.Equal(t, 2, c.Slots, "slots 0 and 1 of the block were filled")
	require.Equal(t, 1, c.Index)
	require.Equal(t, 1, p.Blocks()[c.From].Ref, "the writer's reference moved to the copy")
	require.EqualValues(t, 1, p.Stats().CowCopies)
	require.Equal(t, []Event{c}, rec.take())
	require.NoError(t, p.Commit(f, 1))
	require.NoError(t, p.Check())

	// Free a: its full first block stays cached (still shared with f, so not evictable), its
	// second block is private and partial: it goes back to the free list.
	p.Free(a)
	rel := rec.take()
	require.Len(t, rel, 2)
	require.Equal(t, Released, rel[0].Kind)
	require.Equal(t, 1, rel[0].Index, "last block first")
	require.Equal(t, 0, rel[0].Ref)
	p.Free(f)
	rec.take()
	require.Equal(t, 1, p.Stats().BlocksCached)

	// A new sequence needing all four blocks evicts the cached one.
	g := p.AddSequence(seqTokens(16, 500), "")
	r, err = p.Reserve(g, 16)
	require.NoError(t, err)
	require.Len(t, r.New, 4)
	require.Len(t, r.Evictions, 1)
	require.Equal(t, a.Table(), []int(nil), "a was freed")
	require.EqualValues(t, 1, p.Stats().Evictions)
	evicted := r.Evictions[0]
	require.Contains(t, r.New, evicted.Block, "the evicted block is reused at once")
	require.NotEqual(t, Hash{}, evicted.Hash)
	require.NoError(t, p.Commit(g, 16))
	require.NoError(t, p.Check())

	// Out of blocks: an error, an empty reservation, no events, no change.
	h := p.AddSequence(seqTokens(3, 900), "")
	rec.take()
	before := p.Stats()
	r, err = p.Reserve(h, 3)
	require.ErrorIs(t, err, ErrOutOfBlocks)
	require.True(t, r.Empty())
	require.Empty(t, rec.events)
	require.Equal(t, before, p.Stats())
}

// TestPrefixHitEventsSayWhatWasShared: AddSequence reports one PrefixHit per reused block
// with its place in the table and its reference count after the hit (1: it was cached with
// no owner; more: now shared).
func TestPrefixHitEventsSayWhatWasShared(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 2, 8)
	var rec recorder
	p.SetObserver(func(e Event) { rec.events = append(rec.events, e) })
	a := p.AddSequence(seqTokens(5, 0), "")
	compute(t, p, a)
	p.Free(a)
	rec.take()
	b := p.AddSequence(seqTokens(5, 0), "")
	hits := rec.take()
	require.Len(t, hits, 2)
	for i, e := range hits {
		require.Equal(t, PrefixHit, e.Kind)
		require.Equal(t, b.Table()[i], e.Block)
		require.Equal(t, i, e.Index)
		require.Equal(t, 2, e.Slots)
		require.Equal(t, 1, e.Ref, "it was cached with no owner")
	}
	c := p.AddSequence(seqTokens(5, 0), "")
	for _, e := range rec.take() {
		require.Equal(t, 2, e.Ref, "now shared with b")
	}
	require.Equal(t, b.Table(), c.Table())
	require.Equal(t, "prefix_hit", PrefixHit.String())
}

// TestReclaimReleasesBlocksOutsideTheWindow: blocks wholly before the first position still
// attended are released (cached when full and unshared), become holes in the table, and are
// still held by a sequence that shares them; a prefix hit may reuse a reclaimed block while
// it is cached; the invariants hold throughout.
func TestReclaimReleasesBlocksOutsideTheWindow(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 2, 16)
	var rec recorder
	p.SetObserver(func(e Event) { rec.events = append(rec.events, e) })
	a := p.AddSequence(seqTokens(9, 0), "") // blocks [0 1] [2 3] [4 5] [6 7] [8]
	compute(t, p, a)
	b := p.Fork(a) // shares all five
	rec.take()

	// Window 4 at next position 9: positions before 6 are no longer read.
	require.Equal(t, 3, p.Reclaim(a, 9-4+1))
	ev := rec.take()
	require.Len(t, ev, 3)
	for i, e := range ev {
		require.Equal(t, Reclaimed, e.Kind)
		require.Equal(t, i, e.Index)
		require.Equal(t, 1, e.Ref, "b still holds it")
	}
	require.Equal(t, []int{Hole, Hole, Hole}, a.Table()[:3])
	require.Equal(t, b.Table()[3:], a.Table()[3:])
	require.NoError(t, p.Check())
	require.Zero(t, p.Reclaim(a, 6), "reclaiming again does nothing")
	require.EqualValues(t, 3, p.Stats().BlocksReclaimed)

	// b slides too: the three blocks nobody holds now stay cached (full, hashed).
	require.Equal(t, 3, p.Reclaim(b, 6))
	require.Equal(t, 3, p.Stats().BlocksCached)
	require.NoError(t, p.Check())

	// A new sequence with the same prompt hits the cached blocks; a fork of a sequence
	// with holes shares only what it still holds; Free skips the holes.
	c := p.AddSequence(seqTokens(9, 0), "")
	require.Equal(t, 8, c.Computed())
	f := p.Fork(a)
	require.Equal(t, a.Table(), f.Table())
	require.NoError(t, p.Check())
	for _, s := range []*Sequence{a, b, c, f} {
		p.Free(s)
	}
	require.NoError(t, p.Check())
	require.Zero(t, p.Stats().BlocksUsed)

	// Positions not yet computed are never released.
	d := p.AddSequence(seqTokens(5, 100), "")
	require.NoError(t, reserve(p, d, 5))
	require.Zero(t, p.Reclaim(d, 5), "nothing computed yet")
}
