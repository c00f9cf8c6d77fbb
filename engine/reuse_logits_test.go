package engine

import (
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
)

// stepRecord is what one Step released, its logits cloned before the next Step.
type stepRecord struct {
	tokens  []Token
	prompts []PromptRow
}

// runRecorded runs reqs through one scheduler with cfg and records every step, cloning
// each token's and prompt row's logits at once (valid only until the next Step with
// ReuseLogits).
func runRecorded(t *testing.T, e *Engine, cfg SchedulerConfig, reqs []Request) ([]stepRecord, *Scheduler) {
	t.Helper()
	s := e.NewScheduler(cfg)
	for _, req := range reqs {
		_, err := s.Add(req)
		require.NoError(t, err)
	}
	var steps []stepRecord
	for !s.Done() {
		toks, err := s.Step()
		require.NoError(t, err)
		rec := stepRecord{}
		for _, tok := range toks {
			tok.Logits = slices.Clone(tok.Logits)
			rec.tokens = append(rec.tokens, tok)
		}
		for _, pr := range s.PromptRows() {
			pr.Logits = slices.Clone(pr.Logits)
			rec.prompts = append(rec.prompts, pr)
		}
		steps = append(steps, rec)
	}
	return steps, s
}

// TestReuseLogitsChangesNoResult: a scheduler that writes every step's logits into one
// array of its own releases, step by step, the tokens and prompt rows (with their logits,
// bit for bit) that one taking a fresh array a step releases, for a mix of greedy and
// sampled requests, prompt log-probabilities, prefix hits and preemption. A third of the
// requests check their tokens against the cache-free reference: their verifiers hold
// logits across steps, so the steps that run them must not reuse the array, or a held
// vector would be overwritten and its check fail.
func TestReuseLogitsChangesNoResult(t *testing.T) {
	t.Parallel()

	m, err := microShape.Model()
	require.NoError(t, err)
	reqs := mixedRequests(24)
	for i := range reqs {
		reqs[i].Check = i%3 == 0
		reqs[i].PromptLogits = i%4 == 1
	}
	run := func(reuse bool) ([]stepRecord, *Scheduler) {
		e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 40, Threads: 2})
		steps, s := runRecorded(t, e, SchedulerConfig{MaxBatchTokens: 96, ChunkSize: 16, ReuseLogits: reuse}, reqs)
		require.Positive(t, s.Stats().Preemptions, "the pool should be small enough to force preemption")
		return steps, s
	}
	fresh, _ := run(false)
	reused, s := run(true)
	require.Equal(t, len(fresh), len(reused), "steps")
	for i := range fresh {
		require.Equal(t, fresh[i], reused[i], "step %d", i)
	}
	for id := range reqs {
		require.NoError(t, s.Err(id), "request %d", id)
	}
	require.Positive(t, s.Stats().CheckedTokens)
}

// TestReuseLogitsAllocatesNoVocabulary: with ReuseLogits a decode step of eight sequences
// over a 32,000-token vocabulary allocates far less than its logits (8 · 32,000 float32,
// 1 MB), which a step without it allocates afresh.
func TestReuseLogitsAllocatesNoVocabulary(t *testing.T) {
	shape := synth.Shape{Name: "wide-vocab", Dim: 16, Layers: 1, Heads: 2, KVHeads: 1, Hidden: 24, Context: 256, RopeBase: 10000, Seed: 5, Vocab: 32000}
	m, err := shape.Model()
	require.NoError(t, err)
	const batch = 8
	logitsBytes := uint64(batch * shape.Vocab * 4)
	stepBytes := func(reuse bool) uint64 {
		e := newEngine(t, m, Config{BlockSize: 16, Threads: 1})
		s := e.NewScheduler(SchedulerConfig{ReuseLogits: reuse})
		for i := range batch {
			_, err := s.Add(Request{Prompt: ramp(10+i, 5), MaxTokens: 40, IgnoreEOS: true})
			require.NoError(t, err)
		}
		for range 4 { // the prefill, and the array grown
			toks, err := s.Step()
			require.NoError(t, err)
			require.Len(t, toks, batch)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const steps = 8
		for range steps {
			toks, err := s.Step()
			require.NoError(t, err)
			require.Len(t, toks, batch)
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / steps
	}
	fresh, reused := stepBytes(false), stepBytes(true)
	t.Logf("bytes allocated a decode step of %d: %d fresh, %d reused (logits %d)", batch, fresh, reused, logitsBytes)
	require.GreaterOrEqual(t, fresh, logitsBytes, "a fresh step allocates its logits")
	require.Less(t, reused, logitsBytes/8, "a step reusing the array allocates no vocabulary")
}
