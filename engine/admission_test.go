package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/rng"
)

// TestAdmissionCountsPinnedBlocksOnce: a request whose prefix sits in cached-evictable
// blocks must not count those blocks twice — as reused (not needed) and as available
// (free to allocate). Here the pool has 1 free block and 6 cached ones that the request
// would pin, and the request needs 3 more: it must wait for the running request instead of
// being admitted on a first chunk that fits and preempted at its second.
func TestAdmissionCountsPinnedBlocksOnce(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 9})
	prefix := ramp(7, 24) // six full blocks
	_, err := e.Generate(Request{Prompt: append(prefix[:24:24], 99), MaxTokens: 1, IgnoreEOS: true}, func(Token) error { return nil })
	require.NoError(t, err)
	require.Equal(t, 6, e.pool.Stats().BlocksCached)

	s := e.NewScheduler(SchedulerConfig{ChunkSize: 4, WatermarkBlocks: -1})
	running, err := s.Add(Request{Prompt: ramp(200, 5), MaxTokens: 6, IgnoreEOS: true})
	require.NoError(t, err)
	for range 2 { // its prompt, in chunks of 4 and 1
		_, err = s.Step()
		require.NoError(t, err)
	}
	require.Equal(t, 1, e.pool.Stats().BlocksFree)
	hit, pinned := e.pool.PrefixHit(append(prefix[:24:24], ramp(300, 8)...), "")
	require.Equal(t, 24, hit)
	require.Equal(t, 6, pinned)

	late, err := s.Add(Request{Prompt: append(prefix[:24:24], ramp(300, 8)...), MaxTokens: 4, IgnoreEOS: true})
	require.NoError(t, err)
	_, err = s.Step()
	require.NoError(t, err)
	require.Equal(t, Waiting, s.State(late, 0), "1 free block is not room for 3: the request waits")
	require.NoError(t, s.RunAll(func(Token) error { return nil }))
	require.NoError(t, s.Err(running))
	require.NoError(t, s.Err(late))
	require.Zero(t, s.Stats().Preemptions)
	require.Equal(t, 24, s.Result(late).PrefixHitTokens, "the cached prefix was still there when it was admitted")
}

// TestAdmissionNeverPromisesMoreBlocksThanExist runs mixed requests — shared prefixes,
// n = 1..3 continuations, chunked prefill, a pool small enough to evict and preempt — and
// after every step that admitted a request requires that the blocks the running sequences
// are still owed (the rest of each prompt, the slot of each first token, the forks' first
// tokens), counted from the pool's own block tables, fit in what the pool can hand out.
// Decode growth is not promised (the watermark absorbs it, preemption the rest).
func TestAdmissionNeverPromisesMoreBlocksThanExist(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 40, Threads: 1})
	s := e.NewScheduler(SchedulerConfig{MaxBatchTokens: 64, ChunkSize: 8, WatermarkBlocks: -1})
	r := rng.New(5)
	reqs := mixedRequests(48)
	for i, req := range reqs {
		req.N = 1 + int(r.Uint64()%3)
		req.Check = false
		_, err := s.Add(req)
		require.NoError(t, err, "request %d", i)
	}
	cfg := e.pool.Config()
	owed := func() int {
		total := 0
		for _, q := range s.running {
			if len(q.output) > 0 && q.kv.Len()-q.kv.Computed() <= 1 {
				continue // decoding: its next slot is growth, which admission does not promise
			}
			end := len(q.tokens)
			if len(q.output) == 0 {
				end++
			}
			need := cfg.BlocksFor(end) - len(q.kv.Table())
			if q.idx == 0 && len(q.r.seqs) == 1 && len(q.output) == 0 {
				need += q.r.req.N - 1
			}
			total += max(need, 0)
		}
		return total
	}
	checked := 0
	for !s.Done() {
		waiting := map[*sequence]bool{}
		for q := range s.waiting.All() {
			waiting[q] = true
		}
		wasEmpty := len(s.running) == 0
		_, err := s.Step()
		require.NoError(t, err)
		require.NoError(t, e.pool.Check())
		admitted := false
		for _, q := range s.running {
			admitted = admitted || waiting[q]
		}
		if admitted && !wasEmpty { // into an empty engine a request is admitted on its prompt alone
			require.LessOrEqual(t, owed(), e.pool.Available(), "after step %d", s.Stats().Steps)
			checked++
		}
	}
	for i := range reqs {
		require.NoError(t, s.Err(i), "request %d", i)
	}
	t.Logf("%d steps, %d with admissions checked, %d preemptions", s.Stats().Steps, checked, s.Stats().Preemptions)
	require.Greater(t, checked, 10)
}
