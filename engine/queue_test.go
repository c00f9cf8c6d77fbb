package engine

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestQueueMatchesASlice: random pushes at both ends, pops and removals from anywhere keep
// the queue equal to the plain slice the scheduler used to keep (slices.Insert at the
// front, DeleteFunc to remove), and its memory proportional to its length. Sequences that
// left the line come back to it (a waiting request admitted from the middle of the line,
// then preempted), and are in it once, at their new place.
func TestQueueMatchesASlice(t *testing.T) {
	t.Parallel()

	rapid.Check(t, func(rt *rapid.T) {
		var w queue
		var want, out []*sequence // in line; out of it, to come back
		next := func(i int) *sequence {
			if len(out) > 0 && rapid.Bool().Draw(rt, "again") {
				j := rapid.IntRange(0, len(out)-1).Draw(rt, "returning")
				q := out[j]
				out = slices.Delete(out, j, j+1)
				return q
			}
			return &sequence{idx: i}
		}
		for i := range rapid.IntRange(0, 400).Draw(rt, "ops") {
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 4:
				q := next(i)
				w.PushBack(q)
				want = append(want, q)
			case op < 5:
				q := next(i)
				w.PushFront(q)
				want = slices.Insert(want, 0, q)
			case op < 7 && len(want) > 0:
				require.Same(rt, want[0], w.PopFront())
				out = append(out, want[0])
				want = want[1:]
			case len(want) > 0:
				q := want[rapid.IntRange(0, len(want)-1).Draw(rt, "victim")]
				w.Remove(q)
				want = slices.DeleteFunc(want, func(x *sequence) bool { return x == q })
				out = append(out, q)
			}
			require.Equal(rt, len(want), w.Len())
			require.Equal(rt, len(want), len(slices.Collect(w.All())))
			for i, q := range slices.Collect(w.All()) {
				require.Same(rt, want[i], q)
			}
			if len(want) > 0 {
				require.Same(rt, want[0], w.Front())
			} else {
				require.Nil(rt, w.Front())
			}
			require.LessOrEqual(rt, len(w.back)-w.head+len(w.front), 2*len(want)+64, "removed entries are compacted away")
		}
		for _, q := range want {
			require.Same(rt, q, w.PopFront())
		}
		require.Zero(rt, w.Len())
	})
}

// TestCancelTakesConstantTimePerRequest: cancelling every one of many waiting requests, one
// call each, takes time linear in their number, not quadratic (the scheduler used to search
// the whole waiting line on every cancellation: 1.3 M queued requests hung a server for
// more than 20 minutes). The bound is relative to a 20 times smaller run measured here, and
// generous: 20 times the requests is 20 times the work, but the small run's requests stay
// in the CPU's caches and the large run's do not, which made ratios of 15 to 230 on a loaded
// Zen 4; searching the line on each cancellation made a ratio near 17,000.
func TestCancelTakesConstantTimePerRequest(t *testing.T) {
	m, err := microShape.Model()
	require.NoError(t, err)
	e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 8})
	cancelAll := func(n int) time.Duration {
		s := e.NewScheduler(SchedulerConfig{})
		prompt := ramp(1, 3)
		ids := make([]int, n)
		for i := range ids {
			ids[i], err = s.Add(Request{Prompt: prompt, MaxTokens: 1})
			require.NoError(t, err)
		}
		runtime.GC() // so that no collection of the requests just made runs in the timed part
		start := time.Now()
		for i := n - 1; i >= 0; i -= 2 { // from the back, then the front: neither end is cheap for a slice
			s.Cancel(ids[i])
		}
		for i := 0; i < n; i += 2 {
			s.Cancel(ids[i])
		}
		took := time.Since(start)
		require.True(t, s.Done())
		require.Len(t, s.Ended(), n)
		return took
	}
	small := time.Duration(math.MaxInt64)
	for range 5 { // the least disturbed of five short runs
		small = min(small, cancelAll(5000))
	}
	large := cancelAll(100000)
	t.Logf("cancelling 5000 waiting requests: %v; 100000: %v (ratio %.1f)", small, large, float64(large)/float64(small))
	require.Less(t, float64(large), 2000*float64(small), "cancelling n waiting requests must take O(n) time")
}

// TestCancelManyAndEnded: Cancel takes several requests at once, running and waiting alike,
// and Ended reports every request once, in the order it ended, whatever ended it.
func TestCancelManyAndEnded(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 64})
	s := e.NewScheduler(SchedulerConfig{MaxSequences: 2})
	short, err := s.Add(Request{Prompt: ramp(1, 4), MaxTokens: 1, IgnoreEOS: true})
	require.NoError(t, err)
	long, err := s.Add(Request{Prompt: ramp(2, 4), MaxTokens: 30, IgnoreEOS: true, N: 3})
	require.NoError(t, err)
	waiting, err := s.Add(Request{Prompt: ramp(3, 4), MaxTokens: 30, IgnoreEOS: true})
	require.NoError(t, err)
	later, err := s.Add(Request{Prompt: ramp(4, 4), MaxTokens: 2, IgnoreEOS: true})
	require.NoError(t, err)
	_, err = s.Step() // short and long are admitted (MaxSequences 2); short ends at once
	require.NoError(t, err)
	require.Equal(t, []int{short}, s.Ended())
	require.Empty(t, s.Ended(), "each end is reported once")
	require.Equal(t, Running, s.State(long, 2), "long has forked")
	require.Equal(t, Waiting, s.State(waiting, 0))

	s.Cancel(long, waiting, 99, -1) // unknown ids are ignored
	for q := range 3 {
		require.Equal(t, Finished, s.State(long, q))
		require.Equal(t, "cancelled", s.Result(long).StopReasons[q])
	}
	require.Equal(t, "cancelled", s.Result(waiting).StopReasons[0])
	require.Equal(t, []int{long, waiting}, s.Ended())
	require.Zero(t, e.pool.Stats().BlocksUsed)
	require.NoError(t, s.RunAll(func(Token) error { return nil }))
	require.Equal(t, []int{later}, s.Ended())
	require.Len(t, s.Result(later).Outputs[0], 2)
	require.NotEmpty(t, s.Text(later, 0))
	require.Equal(t, s.Result(later).Texts[0], s.Text(later, 0))
	require.NoError(t, e.pool.Check())
}
