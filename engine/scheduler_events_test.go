package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
)

// TestSchedulerReportsAdmissionsAndPreemptions: the observer hears every admission with the
// prefix the cache supplied and every preemption with what was lost, and the counts agree
// with the scheduler's own statistics; a preemption comes before the Released events of the
// victim's blocks.
func TestSchedulerReportsAdmissionsAndPreemptions(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 12})
	type heard struct {
		sched *SchedulerEvent
		pool  *kvcache.Event
	}
	var log []heard
	e.pool.SetObserver(func(ev kvcache.Event) { log = append(log, heard{pool: &ev}) })
	s := e.NewScheduler(SchedulerConfig{Observer: func(ev SchedulerEvent) { log = append(log, heard{sched: &ev}) }})

	// Request 0 computes a 9-token prompt; request 1 shares its first 8 tokens and comes
	// after it has finished, so two full blocks come from the cache.
	prompt := ramp(1, 9)
	_, err = s.Add(Request{Prompt: prompt, MaxTokens: 2, IgnoreEOS: true})
	require.NoError(t, err)
	require.NoError(t, s.RunAll(func(Token) error { return nil }))
	second := append(ramp(1, 8), 200, 201)
	id, err := s.Add(Request{Prompt: second, MaxTokens: 1, IgnoreEOS: true})
	require.NoError(t, err)
	log = nil
	_, err = s.Step()
	require.NoError(t, err)
	var admits []SchedulerEvent
	for _, h := range log {
		if h.sched != nil {
			admits = append(admits, *h.sched)
		}
	}
	require.Len(t, admits, 1)
	a := admits[0]
	require.Equal(t, SeqAdmitted, a.Kind)
	require.Equal(t, id, a.Request)
	require.Equal(t, 10, a.Tokens)
	require.Equal(t, 8, a.Computed, "two blocks of 4 from the cache")
	require.Equal(t, 3, a.Blocks, "two reused blocks and one reserved for the other 2 tokens")
	require.Equal(t, "admit", a.Kind.String())
	require.NoError(t, s.RunAll(func(Token) error { return nil }))

	// Four long requests in 12 blocks: preemptions.
	log = nil
	for i := range 4 {
		_, err := s.Add(Request{Prompt: ramp(100+50*i, 6), MaxTokens: 14, IgnoreEOS: true})
		require.NoError(t, err)
	}
	before := s.Stats().Preemptions
	require.NoError(t, s.RunAll(func(Token) error { return nil }))
	preempted := 0
	for i, h := range log {
		if h.sched == nil || h.sched.Kind != SeqPreempted {
			continue
		}
		preempted++
		p := h.sched
		require.Positive(t, p.Computed)
		// The victim's blocks are released right after, last block first.
		for j := range p.Blocks {
			next := log[i+1+j].pool
			require.NotNil(t, next)
			require.Equal(t, kvcache.Released, next.Kind)
			require.Equal(t, p.Seq, next.Seq)
			require.Equal(t, p.Blocks-1-j, next.Index)
		}
	}
	require.Positive(t, preempted, "12 blocks for four 20-token sequences must preempt")
	require.Equal(t, s.Stats().Preemptions-before, preempted)

	// A request with three continuations forks twice after its prompt.
	log = nil
	id, err = s.Add(Request{Prompt: ramp(7, 5), MaxTokens: 2, N: 3, IgnoreEOS: true})
	require.NoError(t, err)
	require.NoError(t, s.RunAll(func(Token) error { return nil }))
	var forks []SchedulerEvent
	for _, h := range log {
		if h.sched != nil && h.sched.Kind == SeqForked {
			forks = append(forks, *h.sched)
		}
	}
	require.Len(t, forks, 2)
	for i, f := range forks {
		require.Equal(t, id, f.Request)
		require.Equal(t, i+1, f.Choice)
		require.Equal(t, 5, f.Computed, "the fork shares the computed prompt")
	}
	require.NotEqual(t, forks[0].Seq, forks[1].Seq)
}
