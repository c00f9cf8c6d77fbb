package kvcache

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSnapshotWorkedExample walks a pool of 8 blocks of 2 slots through a prefix hit, a fork,
// a copy-on-write, a free and a reclamation, and holds the snapshot to the state worked out by
// hand from the block-table rules (free blocks are taken from id 0 up).
func TestSnapshotWorkedExample(t *testing.T) {
	t.Parallel()

	p := newTestPool(t, 2, 8)
	a := p.AddSequence([]int{10, 11, 12, 13, 14}, "") // blocks 0 [10 11], 1 [12 13], 2 [14]
	compute(t, p, a)
	b := p.AddSequence([]int{10, 11, 12, 13, 20}, "") // prefix hit on 0 and 1; block 3 [20]
	compute(t, p, b)
	f := p.Fork(a) // shares 0, 1, 2
	f.Append(30)
	compute(t, p, f) // writes slot 1 of shared block 2: copy-on-write into block 4 [14 30]
	p.Free(b)        // block 3 (partial) is free again; 0 and 1 stay shared by a and f

	snap := p.Snapshot()
	require.Equal(t, []SequenceView{
		{ID: 0, Table: []int{0, 1, 2}, Len: 5, Computed: 5},
		{ID: 2, Table: []int{0, 1, 4}, Len: 6, Computed: 6},
	}, snap.Sequences)
	want := map[int]BlockView{
		0: {ID: 0, State: StateShared, Ref: 2, Filled: 2, Tokens: []int{10, 11}, Seqs: []int{0, 2}},
		1: {ID: 1, State: StateShared, Ref: 2, Filled: 2, Tokens: []int{12, 13}, Seqs: []int{0, 2}},
		2: {ID: 2, State: StateUsed, Ref: 1, Filled: 1, Tokens: []int{14}, Seqs: []int{0}},
		3: {ID: 3, State: StateFree, Tokens: []int{}, Seqs: []int{}},
		4: {ID: 4, State: StateUsed, Ref: 1, Filled: 2, Tokens: []int{14, 30}, Seqs: []int{2}},
	}
	for id, w := range want {
		got := snap.Blocks[id]
		if got.Hash != "" {
			w.Hash = got.Hash // checked below against Blocks()
		}
		require.Equal(t, w, got, "block %d", id)
	}
	for _, id := range []int{0, 1, 4} {
		require.NotEmpty(t, snap.Blocks[id].Hash, "block %d is full and indexed", id)
	}
	require.Empty(t, snap.Blocks[2].Hash, "a partial block has no hash")

	// a ends: block 2 goes back to the free list, 0 and 1 are f's alone.
	p.Free(a)
	snap = p.Snapshot()
	require.Equal(t, StateFree, snap.Blocks[2].State)
	require.Equal(t, StateUsed, snap.Blocks[0].State)
	require.Equal(t, []int{2}, snap.Blocks[0].Seqs)

	// f slides past its first two blocks: holes in its table, the blocks cached with their
	// stored tokens and no owner.
	require.Equal(t, 2, p.Reclaim(f, 4))
	snap = p.Snapshot()
	require.Equal(t, []int{Hole, Hole, 4}, snap.Sequences[0].Table)
	require.Equal(t, BlockView{ID: 1, State: StateCached, Filled: 2, Hash: snap.Blocks[1].Hash, Tokens: []int{12, 13}, Seqs: []int{}}, snap.Blocks[1])
	requireSnapshotAgrees(t, p)
}

// requireSnapshotAgrees holds a snapshot to the pool's own Stats, Blocks and sequences.
func requireSnapshotAgrees(t *testing.T, p *Pool) {
	t.Helper()
	snap := p.Snapshot()
	require.Equal(t, p.Stats(), snap.Stats)
	count := map[State]int{}
	shared := 0
	for i, b := range p.Blocks() {
		v := snap.Blocks[i]
		require.Equal(t, b.ID, v.ID)
		require.Equal(t, b.Ref, v.Ref, "block %d", i)
		require.Equal(t, b.Filled, v.Filled, "block %d", i)
		require.Equal(t, b.Hash, v.Hash, "block %d", i)
		require.Equal(t, b.Cached, v.State == StateCached, "block %d", i)
		require.Len(t, v.Seqs, b.Ref, "block %d: one owner per reference (no table holds a block twice)", i)
		count[v.State]++
		if b.Ref > 1 {
			shared++
		}
	}
	require.Equal(t, snap.Stats.BlocksFree, count[StateFree])
	require.Equal(t, snap.Stats.BlocksCached, count[StateCached])
	require.Equal(t, snap.Stats.BlocksUsed, count[StateUsed]+count[StateShared])
	require.Equal(t, snap.Stats.BlocksShared, shared)
	require.Len(t, snap.Sequences, snap.Stats.Sequences)
	bs := p.Config().BlockSize
	for _, sv := range snap.Sequences {
		s := p.seqs[sv.ID]
		require.Equal(t, s.Table(), sv.Table)
		tables := [][]int{sv.Table}
		if p.Config().Groups != nil {
			require.Len(t, sv.Tables, p.Groups())
			tables = sv.Tables
		}
		for g, table := range tables {
			require.Equal(t, s.GroupTable(g), table)
			for idx, id := range table {
				if id == Hole {
					continue
				}
				v := snap.Blocks[id]
				require.Contains(t, v.Seqs, sv.ID)
				require.Equal(t, g, v.Group, "block %d is group %d's", id, g)
				n := min(v.Filled, s.Computed()-idx*bs)
				require.Equal(t, s.Tokens()[idx*bs:idx*bs+n], v.Tokens[:n], "seq %d group %d block %d", sv.ID, g, idx)
			}
		}
	}
}

// TestSnapshotAgreesUnderRandomTraces runs random verbs and compares every snapshot with the
// pool's own accounts.
// The same with cache groups: a full group and a sliding one (window 4), Slide after every
// commit as the engine does.
func TestSnapshotAgreesUnderRandomTraces(t *testing.T) {
	t.Parallel()

	t.Run("uniform", func(t *testing.T) { randomTrace(t, newTestPool(t, 3, 12), false) })
	t.Run("groups", func(t *testing.T) { randomTrace(t, newGroupPool(t, 3, 24, 4), true) })
}

// randomTrace runs 400 random verbs on p, checking the invariants and the snapshot after
// each; slide calls Pool.Slide after every commit.
func randomTrace(t *testing.T, p *Pool, slide bool) {
	commit := func(s *Sequence, n int) {
		require.NoError(t, p.Commit(s, n))
		if slide {
			p.Slide(s)
		}
	}
	var live []*Sequence
	for step := range 400 {
		switch {
		case step%7 == 3 && len(live) > 0:
			p.Free(live[0])
			live = live[1:]
		case step%5 == 2 && len(live) > 0:
			live = append(live, p.Fork(live[len(live)-1]))
		case step%11 == 6 && len(live) > 0:
			s := live[step%len(live)]
			if !slide {
				p.Reclaim(s, s.Computed()-4)
			}
		case step%3 == 0:
			s := p.AddSequence(seqTokens(2+step%9, step%4), "")
			if err := reserve(p, s, s.Len()-s.Computed()); err != nil {
				p.Free(s)
				continue
			}
			commit(s, s.Len()-s.Computed())
			live = append(live, s)
		case len(live) > 0:
			s := live[step%len(live)]
			s.Append(step % 50)
			if err := reserve(p, s, 1); err != nil {
				p.Free(s)
				live = append(live[:step%len(live)], live[step%len(live)+1:]...)
				continue
			}
			commit(s, 1)
		}
		require.NoError(t, p.Check())
		requireSnapshotAgrees(t, p)
	}
	st := p.Stats()
	require.Positive(t, st.PrefixHitTokens, "the trace had prefix hits")
	require.Positive(t, st.CowCopies, "and copies on write")
	if slide {
		require.Positive(t, st.Groups[1].BlocksReclaimed, "and the sliding group released blocks")
		require.Zero(t, st.Groups[0].BlocksReclaimed)
	}
}
