package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/rng"
)

// mixedRequests builds n requests with prompt lengths from 1 to 60, a third of them
// sharing a 24-token prefix, half greedy and half sampled with their own seeds.
func mixedRequests(n int) []Request {
	r := rng.New(77)
	shared := ramp(500, 24)
	var reqs []Request
	for i := 0; i < n; i++ {
		length := 1 + int(r.Uint64()%60)
		var prompt []int
		if i%3 == 0 && length > 24 {
			prompt = append(prompt, shared...)
		} else {
			prompt = []int{1}
		}
		for len(prompt) < length {
			prompt = append(prompt, 3+int(r.Uint64()%250))
		}
		req := Request{Prompt: prompt, MaxTokens: 8 + int(r.Uint64()%12), IgnoreEOS: i%2 == 0, Check: true}
		if i%2 == 1 {
			req.Sampling = Sampling{Temperature: 0.9, TopK: 40, TopP: 0.95, Seed: uint64(i)}
		}
		reqs = append(reqs, req)
	}
	return reqs
}

// TestContinuousBatchingIsBatchInvariant runs 64 mixed requests through one scheduler with
// chunked prefill (chunk sizes 7 and 64) and a pool small enough to force preemption. With
// Check on, every step of every sequence is compared bit for bit with the cache-free
// reference of its tokens; and every request's output equals running it alone.
func TestContinuousBatchingIsBatchInvariant(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	reqs := mixedRequests(64)

	alone := make([][]int, len(reqs))
	solo, err := New(m, Config{BlockSize: 4, Threads: 1})
	require.NoError(t, err)
	defer solo.Close()
	for i, req := range reqs {
		res, err := solo.Generate(req, func(Token) error { return nil })
		require.NoError(t, err)
		alone[i] = res.Outputs[0]
	}

	for _, chunk := range []int{7, 64} {
		t.Run(fmt.Sprintf("chunk%d", chunk), func(t *testing.T) {
			e, err := New(m, Config{BlockSize: 4, CacheBlocks: 48, Threads: 2})
			require.NoError(t, err)
			defer e.Close()
			s := e.NewScheduler(SchedulerConfig{MaxBatchTokens: 256, ChunkSize: chunk})
			for _, req := range reqs {
				_, err := s.Add(req)
				require.NoError(t, err)
			}
			for !s.Done() {
				_, err := s.Step()
				require.NoError(t, err)
				require.NoError(t, e.pool.Check())
			}
			st := s.Stats()
			t.Logf("%d steps, batch mean %.1f tokens / %.1f sequences (max %d / %d), %d preemptions, %d prefill + %d decode tokens",
				st.Steps, st.RowsMean, st.SequencesMean, st.RowsMax, st.SequencesMax, st.Preemptions, st.PrefillTokens, st.DecodeTokens)
			require.Positive(t, st.Preemptions, "the pool should be small enough to force preemption")
			require.GreaterOrEqual(t, st.SequencesMax, 8, "requests should run batched")
			for i := range reqs {
				require.NoError(t, s.Err(i))
				require.Equal(t, alone[i], s.Result(i).Outputs[0], "request %d", i)
			}
			require.Zero(t, e.pool.Stats().BlocksUsed)
		})
	}
}

func TestSchedulerRejectsWhatCanNeverFit(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 4})
	s := e.NewScheduler(SchedulerConfig{})
	_, err = s.Add(Request{Prompt: ramp(0, 20), MaxTokens: 1})
	require.ErrorIs(t, err, ErrRejected)
	require.ErrorContains(t, err, "cache is too small")
	require.True(t, s.Done())
}

func TestCancelFreesBlocksAtOnce(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 64})
	s := e.NewScheduler(SchedulerConfig{ChunkSize: 8, MaxBatchTokens: 8})
	a, err := s.Add(Request{Prompt: ramp(1, 40), MaxTokens: 50, IgnoreEOS: true})
	require.NoError(t, err)
	b, err := s.Add(Request{Prompt: ramp(2, 6), MaxTokens: 50, IgnoreEOS: true})
	require.NoError(t, err)
	_, err = s.Step() // a is mid-prefill (8 of 40 tokens)
	require.NoError(t, err)
	require.Equal(t, Running, s.State(a, 0))
	s.Cancel(a)
	require.Equal(t, Finished, s.State(a, 0))
	require.Equal(t, "cancelled", s.Result(a).StopReasons[0])
	require.Zero(t, e.pool.Stats().BlocksUsed)
	for i := 0; i < 5; i++ {
		_, err = s.Step()
		require.NoError(t, err)
	}
	require.Equal(t, Running, s.State(b, 0)) // b is decoding
	used := e.pool.Stats().BlocksUsed
	require.Positive(t, used)
	s.Cancel(b)
	require.Zero(t, e.pool.Stats().BlocksUsed)
	require.NoError(t, e.pool.Check())
	require.True(t, s.Done())
}

func TestStopTokensAndStrings(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	e := newEngine(t, m, Config{})
	base := Request{Prompt: ramp(3, 5), MaxTokens: 30, IgnoreEOS: true}
	full, err := e.Generate(base, func(Token) error { return nil })
	require.NoError(t, err)
	out := full.Outputs[0]

	// A stop token ends generation right after it is produced.
	withTok := base
	withTok.StopTokens = []int{out[6]}
	res, err := e.Generate(withTok, func(Token) error { return nil })
	require.NoError(t, err)
	first := 0
	for first < len(out) && out[first] != out[6] {
		first++
	}
	require.Equal(t, out[:first+1], res.Outputs[0])
	require.Equal(t, "stop", res.StopReasons[0])

	// A stop string made of the pieces of tokens 10..12 cuts the text before it.
	var stop []byte
	for _, id := range out[10:13] {
		stop = append(stop, m.Tokenizer.Piece(id)...)
	}
	withStr := base
	withStr.StopStrings = []string{string(stop)}
	res, err = e.Generate(withStr, func(Token) error { return nil })
	require.NoError(t, err)
	require.Equal(t, "stop", res.StopReasons[0])
	require.NotContains(t, res.Texts[0], string(stop))
	require.LessOrEqual(t, len(res.Outputs[0]), 13)
}

func TestReleaseForgetsFinishedRequests(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	e := newEngine(t, m, Config{})
	s := e.NewScheduler(SchedulerConfig{})
	a, err := s.Add(Request{Prompt: ramp(1, 5), MaxTokens: 3, IgnoreEOS: true})
	require.NoError(t, err)
	require.False(t, s.Release(a), "an unfinished request is kept")
	var last Token
	require.NoError(t, s.RunAll(func(tk Token) error { last = tk; return nil }))
	require.True(t, last.Final)
	require.Equal(t, "length", last.StopReason)
	require.Len(t, s.Result(a).Outputs[0], 3)
	require.True(t, s.Release(a))
	require.Empty(t, s.Result(a).Outputs)
	require.Equal(t, Finished, s.State(a, 0))
	require.False(t, s.Release(a))
}

// TestCheckFailureEndsOnlyItsRequest: a corrupted cache row fails the request that reads
// it; a request with its own blocks carries on.
func TestCheckFailureEndsOnlyItsRequest(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	e := newEngine(t, m, Config{BlockSize: 4})
	s := e.NewScheduler(SchedulerConfig{})
	bad, err := s.Add(Request{Prompt: ramp(1, 9), MaxTokens: 40, IgnoreEOS: true, Check: true})
	require.NoError(t, err)
	good, err := s.Add(Request{Prompt: ramp(100, 9), MaxTokens: 40, IgnoreEOS: true, Check: true})
	require.NoError(t, err)
	_, err = s.Step()
	require.NoError(t, err)
	row := e.pool.KRow(0, 0, 1) // block 0 belongs to the first request (allocated first)
	row[3] ^= 0x20
	require.NoError(t, s.RunAll(func(Token) error { return nil }))
	var ce *CheckError
	require.ErrorAs(t, s.Err(bad), &ce)
	require.NoError(t, s.Err(good))
	require.Len(t, s.Result(good).Outputs[0], 40)
	require.NoError(t, e.pool.Check())
}

// TestRequestsSharingAPromptComputeItOnce: requests that arrive together with one system
// prompt do not each compute it. The first computes it in the first step while the others
// wait for it (a request that shares nothing goes ahead of them), then they reuse its blocks
// as their prefix hit in the next step; every token is checked against the cache-free
// reference, and every output equals running the request alone.
func TestRequestsSharingAPromptComputeItOnce(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	system := ramp(900, 24) // six blocks of 4
	var reqs []Request
	for i := range 4 {
		prompt := append(append([]int(nil), system...), 5+i, 9, 11+i)
		reqs = append(reqs, Request{Prompt: prompt, MaxTokens: 6, IgnoreEOS: true, Check: true})
	}
	other := Request{Prompt: ramp(40, 13), MaxTokens: 6, IgnoreEOS: true, Check: true}
	reqs = slices.Insert(reqs, 2, other) // behind two sharers in line

	alone := make([][]int, len(reqs))
	solo := newEngine(t, m, Config{BlockSize: 4, Threads: 1})
	for i, req := range reqs {
		res, err := solo.Generate(req, func(Token) error { return nil })
		require.NoError(t, err)
		alone[i] = res.Outputs[0]
	}

	e := newEngine(t, m, Config{BlockSize: 4, Threads: 2})
	s := e.NewScheduler(SchedulerConfig{MaxBatchTokens: 256})
	for _, req := range reqs {
		_, err := s.Add(req)
		require.NoError(t, err)
	}
	_, err = s.Step()
	require.NoError(t, err)
	require.EqualValues(t, len(reqs[0].Prompt)+len(other.Prompt), s.Stats().PrefillTokens,
		"the first step computes the first sharer's prompt and the other request's, not copies of the system prompt")
	_, err = s.Step()
	require.NoError(t, err)
	require.EqualValues(t, len(reqs[0].Prompt)+len(other.Prompt)+3*3, s.Stats().PrefillTokens,
		"the second step computes only the other sharers' own tokens")
	require.NoError(t, s.RunAll(func(Token) error { return nil }))
	for i := range reqs {
		require.NoError(t, s.Err(i))
		res := s.Result(i)
		require.Equal(t, alone[i], res.Outputs[0], "request %d", i)
		if i != 0 && i != 2 {
			require.Equal(t, len(system), res.PrefixHitTokens, "request %d reuses the system prompt", i)
		}
	}
}
