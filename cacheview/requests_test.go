package cacheview

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ev is an event of the pool (index ≥ 0) or the scheduler.
func ev(kind string, seq, block, index int) Event {
	return Event{Kind: kind, Seq: seq, Block: block, Index: index, From: -1, Request: -1, Choice: -1}
}

func sched(kind string, request, choice, seq, computed int) Event {
	return Event{Kind: kind, Seq: seq, Block: -1, Index: -1, From: -1, Request: request, Choice: choice, Computed: computed}
}

// TestRequestsFollowTheEvents: the tracker numbers requests across schedulers (engine ids
// restart), follows each sequence's table from the pool's events (prefix hits, allocations,
// forks, copies, reclaimed holes), forgets a preempted sequence's blocks, marks the blocks of
// a finished request that were later given to other tokens, and keeps the last keep.
func TestRequestsFollowTheEvents(t *testing.T) {
	now := time.Unix(0, 0)
	r := NewRequests(2)
	sub := r.Submit(0, "Once", 6, 2, now)
	require.Equal(t, 1, sub.Request)
	require.Equal(t, "submit", sub.Kind)
	for _, e := range []Event{ev("prefix_hit", 0, 5, 0), ev("alloc", 0, 7, 1)} {
		r.Observe(&e)
	}
	a := sched("admit", 0, 0, 0, 4)
	r.Observe(&a)
	require.Equal(t, 1, a.Request, "the event carries the request's number")
	for _, e := range []Event{ev("fork", 1, 5, 0), ev("fork", 1, 7, 1)} {
		r.Observe(&e)
	}
	f := sched("fork_seq", 0, 1, 1, 0)
	r.Observe(&f)
	for _, e := range []Event{ev("cow", 1, 8, 1), ev("alloc", 0, 9, 2), ev("reclaim", 0, 5, 0)} {
		r.Observe(&e)
	}
	snap := r.Snapshot()
	require.Len(t, snap, 1)
	q := snap[0]
	require.Equal(t, "running", q.State)
	require.Equal(t, 4, q.Reused)
	require.Equal(t, []int{-1, 7, 9}, q.Sequences[0].Blocks)
	require.Equal(t, []int{5, 8}, q.Sequences[1].Blocks)

	// Preempted, then readmitted as seq 2: the old table is gone.
	p := sched("preempt", 0, 1, 1, 0)
	r.Observe(&p)
	require.Equal(t, "preempted", r.Snapshot()[0].Sequences[1].State)
	for _, e := range []Event{ev("release", 1, 5, 0), ev("release", 1, 8, 1), ev("alloc", 2, 10, 0)} {
		r.Observe(&e)
	}
	a2 := sched("admit", 0, 1, 2, 0)
	r.Observe(&a2)
	q = r.Snapshot()[0]
	require.Equal(t, 4, q.Reused, "reused counts the first admission")
	require.Equal(t, 1, q.Preemptions)
	require.Equal(t, []int{10}, q.Sequences[1].Blocks)

	fin, ok := r.End(0, []string{"length", "length"}, "", now)
	require.True(t, ok)
	require.Equal(t, "length ×2", fin.Reason)
	require.Equal(t, 4, fin.Computed)
	_, ok = r.End(0, nil, "", now)
	require.False(t, ok, "ended once")

	// A new scheduler reuses engine id 0: request 2. It takes block 9 again (new tokens):
	// request 1's block 9 is stale, its block 7 is not.
	r.Submit(0, "Tom", 3, 1, now)
	for _, e := range []Event{ev("alloc", 3, 9, 0)} {
		r.Observe(&e)
	}
	a3 := sched("admit", 0, 0, 3, 0)
	r.Observe(&a3)
	require.Equal(t, 2, a3.Request)
	snap = r.Snapshot()
	require.Equal(t, []int{2, 1}, []int{snap[0].ID, snap[1].ID}, "live first, then finished")
	require.Equal(t, []int{9}, snap[1].Sequences[0].Stale)
	require.Empty(t, snap[1].Sequences[1].Stale)
	_, ok = r.End(0, []string{"cancelled"}, "", now)
	require.True(t, ok)
	r.Submit(1, "x", 1, 1, now)
	_, ok = r.End(1, []string{"eos"}, "boom", now)
	require.True(t, ok)
	snap = r.Snapshot()
	require.Len(t, snap, 2, "the ring keeps 2")
	require.Equal(t, 3, snap[0].ID)
	require.Equal(t, "error: boom", snap[0].Finish)
	require.Equal(t, 2, snap[1].ID)
	require.Empty(t, r.seqs, "nothing tracked once no request is live")
}
