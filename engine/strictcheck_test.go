package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
)

// checkedRun steps a scheduler holding one request and, right after scheduler step
// corruptAfter (1 is the prefill), flips one bit of the key at position 2 of layer 1 in
// the request's first block: every logit computed afterwards reads it. It returns every
// token Step released, in order, with the number of tokens sampled before the corruption.
func checkedRun(t *testing.T, e *Engine, req Request, corruptAfter int) (released []Token, sampledBefore int, id int, s *Scheduler) {
	t.Helper()
	s = e.NewScheduler(SchedulerConfig{})
	id, err := s.Add(req)
	require.NoError(t, err)
	for step := 1; !s.Done(); step++ {
		toks, err := s.Step()
		require.NoError(t, err)
		released = append(released, toks...)
		if step == corruptAfter {
			kv := s.requests[id].seqs[0].kv
			require.NotNil(t, kv)
			sampledBefore = len(s.requests[id].seqs[0].output)
			e.pool.KRow(1, kv.Table()[0], 2)[5] ^= 0x40
		}
	}
	return released, sampledBefore, id, s
}

// TestCheckNeverReleasesAnUnverifiedToken is the strict --check contract: a corrupted cache
// entry is found, and not one token sampled from logits computed after the corruption is
// released — only the tokens before it, each equal to the clean run's — however the
// corruption falls against the check window (inside the first window, at its end, in the
// second, at the last step).
func TestCheckNeverReleasesAnUnverifiedToken(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	prompt := []int{1, 10, 20, 30, 40, 50}
	const n = 70
	clean, _ := collect(t, newEngine(t, m, Config{BlockSize: 4}), greedy(prompt, n))
	require.Len(t, clean, n)
	for _, after := range []int{1, 4, CheckWindow, CheckWindow + 1, CheckWindow + 9, n - 1} {
		t.Run(fmt.Sprintf("corrupt after step %d", after), func(t *testing.T) {
			e := newEngine(t, m, Config{BlockSize: 4})
			released, before, id, s := checkedRun(t, e, greedy(prompt, n), after)
			require.Equal(t, after, before, "one token is sampled per scheduler step")
			var ce *CheckError
			require.ErrorAs(t, s.Err(id), &ce)
			require.Equal(t, before, ce.Step, "the first step computed after the corruption fails")
			require.Equal(t, len(prompt)-1+before, ce.Pos)
			require.Len(t, released, before, "exactly the tokens whose logits were verified are released")
			for i, tk := range released {
				require.Equal(t, clean[i].ID, tk.ID, "token %d", i)
				require.Equal(t, clean[i].Logits, tk.Logits, "token %d", i)
			}
			require.Len(t, s.Result(id).Outputs[0], before, "Result counts only released tokens")
			require.Equal(t, int64(before), s.Stats().CheckedTokens)
			require.NoError(t, e.pool.Check())
		})
	}
}

// TestCheckHoldsTokensUntilTheirWindowIsVerified: without corruption, a checked request
// releases nothing until CheckWindow tokens are held, then all of them at once; the rest
// come with the last token; every token is counted as checked.
func TestCheckHoldsTokensUntilTheirWindowIsVerified(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	e := newEngine(t, m, Config{BlockSize: 4})
	s := e.NewScheduler(SchedulerConfig{})
	const n = CheckWindow + 5
	id, err := s.Add(greedy([]int{1, 7, 8, 9}, n))
	require.NoError(t, err)
	var bursts []int
	for !s.Done() {
		toks, err := s.Step()
		require.NoError(t, err)
		if len(toks) > 0 {
			bursts = append(bursts, len(toks))
			require.Equal(t, 0, s.requests[id].seqs[0].check.Held(), "a release empties the window")
		}
	}
	require.Equal(t, []int{CheckWindow, 5}, bursts)
	require.EqualValues(t, n, s.Stats().CheckedTokens)
	res := s.Result(id)
	require.Len(t, res.Outputs[0], n)
	// The same tokens as an unchecked run.
	unchecked := greedy([]int{1, 7, 8, 9}, n)
	unchecked.Check = false
	plain, _ := collect(t, newEngine(t, m, Config{BlockSize: 4}), unchecked)
	require.Len(t, plain, n)
	for i, tk := range plain {
		require.Equal(t, tk.ID, res.Outputs[0][i])
	}
}

// TestCancelDiscardsHeldTokens: cancelling a checked request drops its held tokens
// unverified; none is released, afterwards or ever, and Result does not count them.
func TestCancelDiscardsHeldTokens(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	e := newEngine(t, m, Config{BlockSize: 4})
	s := e.NewScheduler(SchedulerConfig{})
	id, err := s.Add(greedy([]int{1, 2, 3}, 50))
	require.NoError(t, err)
	for range 6 {
		toks, err := s.Step()
		require.NoError(t, err)
		require.Empty(t, toks, "nothing is released before the window is full")
	}
	q := s.requests[id].seqs[0]
	require.Equal(t, 6, q.check.Held())
	s.Cancel(id)
	require.Zero(t, q.check.Held(), "Cancel discards the held tokens")
	require.True(t, s.Done())
	toks, err := s.Step()
	require.NoError(t, err)
	require.Empty(t, toks)
	require.Empty(t, s.Result(id).Outputs[0])
	require.Equal(t, []string{"cancelled"}, s.Result(id).StopReasons)
	require.Zero(t, s.Stats().CheckedTokens)
	require.Zero(t, e.pool.Stats().BlocksUsed)
}

// TestFailureFlushesHeldTokens: a checked request that fails for another reason (the pool
// runs out mid-decode) first verifies its held tokens and releases them, so it delivers
// exactly what an unchecked run delivers before the same failure.
func TestFailureFlushesHeldTokens(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	run := func(check bool) ([]Token, error) {
		e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 3})
		s := e.NewScheduler(SchedulerConfig{})
		req := greedy([]int{1, 2, 3}, 40)
		req.Check = check
		id, err := s.Add(req)
		require.NoError(t, err)
		var toks []Token
		require.NoError(t, s.RunAll(func(tk Token) error { toks = append(toks, tk); return nil }))
		require.NoError(t, e.pool.Check())
		return toks, s.Err(id)
	}
	plain, perr := run(false)
	checked, cerr := run(true)
	require.ErrorIs(t, perr, kvcache.ErrOutOfBlocks)
	require.ErrorIs(t, cerr, kvcache.ErrOutOfBlocks)
	require.NotEmpty(t, plain)
	require.Less(t, len(plain), CheckWindow, "the failure falls inside the first window")
	require.Equal(t, plain, checked)
}

// TestCheckFailureFlushesSiblings: when one continuation of an n = 2 request fails its
// check (its private block is corrupted), the request ends; the other continuation's held
// tokens are verified and released first, and the failing one releases only its own
// verified tokens.
func TestCheckFailureFlushesSiblings(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	e := newEngine(t, m, Config{BlockSize: 4})
	s := e.NewScheduler(SchedulerConfig{})
	const n = 30 // less than a window: nothing is verified before the end
	req := Request{Prompt: []int{1, 4, 5, 6, 7, 8}, MaxTokens: n, IgnoreEOS: true, Check: true, N: 2,
		Sampling: Sampling{Temperature: 1, Seed: 3}}
	id, err := s.Add(req)
	require.NoError(t, err)
	var released []Token
	for step := 1; !s.Done(); step++ {
		toks, err := s.Step()
		require.NoError(t, err)
		released = append(released, toks...)
		if step == 5 {
			// Position 8 (token 2, computed at step 4) lies in a block continuation 0
			// allocated after the fork: only its own logits read it.
			kv := s.requests[id].seqs[0].kv
			e.pool.KRow(0, kv.Table()[2], 0)[1] ^= 0x10
		}
	}
	var ce *CheckError
	require.ErrorAs(t, s.Err(id), &ce)
	require.Equal(t, 0, ce.Seq)
	require.Equal(t, 5, ce.Step)
	per := map[int]int{}
	for _, tk := range released {
		per[tk.Seq]++
	}
	res := s.Result(id)
	require.Equal(t, per[0], len(res.Outputs[0]))
	require.Equal(t, per[1], len(res.Outputs[1]))
	require.Equal(t, 5, per[0], "continuation 0 releases the tokens sampled before the corruption")
	// Continuation 0 fails at the last step, before continuation 1 samples its last token:
	// the 29 tokens continuation 1 holds are flushed (verified, released), not dropped.
	require.Equal(t, n-1, per[1])
	require.Equal(t, int64(per[0]+per[1]), s.Stats().CheckedTokens)
	require.Equal(t, []string{"error", "error"}, res.StopReasons)
}
