package engine

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// swaModel is a Mistral-style model: every layer attends over a window of w positions.
func swaModel(t testing.TB, w int) *model.Model {
	t.Helper()
	s := synth.Shape{Name: "swa", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 96, Context: 512, RopeBase: 10000, Seed: 21, SlidingWindow: w}
	m, err := s.Model()
	require.NoError(t, err)
	require.Equal(t, w, m.Config.ReclaimWindow())
	return m
}

// TestSlidingWindowReclaimsBlocks: a long generation through a window of 16 with blocks of
// 4 is bitwise equal to the cache-free reference at every step (Check), never holds more than
// ceil(16/4)+1 blocks, and releases the rest as it goes.
func TestSlidingWindowReclaimsBlocks(t *testing.T) {
	t.Parallel()

	const w, bs = 16, 4
	m := swaModel(t, w)
	for _, ct := range []quant.CacheType{quant.F32, quant.Q8_0} {
		e := newEngine(t, m, Config{BlockSize: bs, KType: ct, VType: ct})
		s := e.NewScheduler(SchedulerConfig{})
		_, err := s.Add(greedy([]int{1, 5, 6, 7, 8, 9, 10}, 200))
		require.NoError(t, err)
		peak := 0
		for !s.Done() {
			_, err := s.Step()
			require.NoError(t, err)
			peak = max(peak, e.pool.Stats().BlocksUsed)
			require.NoError(t, e.pool.Check())
		}
		require.Equal(t, (w+bs-1)/bs+1, peak, "%s: blocks held at most", ct)
		require.NoError(t, s.Err(0), ct.String())
		require.GreaterOrEqual(t, e.pool.Stats().BlocksReclaimed, int64(200/bs-(w/bs+1)), ct.String())
	}
}

// TestSlidingWindowMasksOnlyBeyondTheWindow: positions whose whole history fits in the window
// get exactly the full-attention model's logits; later positions differ (the oldest ones are
// masked), in the cached path as in the reference.
func TestSlidingWindowMasksOnlyBeyondTheWindow(t *testing.T) {
	t.Parallel()

	const w = 8
	swa := swaModel(t, w)
	full := *swa
	full.Config.SlidingWindow = 0
	tokens := make([]int, 20)
	for i := range tokens {
		tokens[i] = 1 + 3*i
	}
	rs, rf := model.NewRunner(swa, 1), model.NewRunner(&full, 1)
	defer rs.Close()
	defer rf.Close()
	a, err := rs.Reference(tokens, quant.F32, quant.F32, 0)
	require.NoError(t, err)
	b, err := rf.Reference(tokens, quant.F32, quant.F32, 0)
	require.NoError(t, err)
	for p := range tokens {
		same := true
		for i := range a[p] {
			same = same && math.Float32bits(a[p][i]) == math.Float32bits(b[p][i])
		}
		require.Equal(t, p < w, same, "position %d", p)
	}
}

// TestSlidingWindowSharedPrefixAndPreemption: a fork that stays behind keeps seeing the
// blocks its sibling slid past (they are shared, so the sibling only drops its reference);
// a new request with the same prompt reuses the chain of blocks still cached; and a pool too
// small for everything preempts and recomputes a sequence after it reclaimed blocks, all
// bitwise equal to the reference.
func TestSlidingWindowSharedPrefixAndPreemption(t *testing.T) {
	t.Parallel()

	const w, bs = 12, 4
	m := swaModel(t, w)
	prompt := make([]int, 30)
	for i := range prompt {
		prompt[i] = 2 + i
	}
	e := newEngine(t, m, Config{BlockSize: bs, KType: quant.F32, VType: quant.F32})
	a := e.pool.AddSequence(prompt, "")
	_, err := e.Step([]*kvcache.Sequence{a})
	require.NoError(t, err)
	// The next token, at position 30, attends over 19..30: blocks 0-3 (positions 0-15) go.
	require.EqualValues(t, (30-w+1)/bs, e.pool.Stats().BlocksReclaimed)
	require.Equal(t, []int{kvcache.Hole, kvcache.Hole, kvcache.Hole, kvcache.Hole}, a.Table()[:4])
	require.NotEqual(t, kvcache.Hole, a.Table()[4])
	// A new sequence with the same prompt: the reclaimed full blocks are cached and still hit.
	b := e.pool.AddSequence(prompt, "")
	require.Equal(t, 28, b.Computed())
	f := e.pool.Fork(b) // f shares b's blocks, then b slides on alone
	for i := range 20 {
		b.Append(40 + i)
		_, err := e.Step([]*kvcache.Sequence{b})
		require.NoError(t, err)
	}
	require.Equal(t, kvcache.Hole, b.Table()[0])
	require.NotEqual(t, kvcache.Hole, f.Table()[0], "the fork still holds the prefix")
	require.NoError(t, e.pool.Check())
	f.Append(99)
	logits, err := e.Step([]*kvcache.Sequence{f})
	require.NoError(t, err)
	ref, err := e.runner.Reference(f.Tokens(), quant.F32, quant.F32, f.Len()-1)
	require.NoError(t, err)
	require.NoError(t, Compare(logits[0], ref[0], f.ID(), 0, f.Len()-1))

	// Preemption after reclamation: three long greedy requests in a pool that holds two.
	small := newEngine(t, m, Config{BlockSize: bs, CacheBlocks: 2 * (w/bs + 2), KType: quant.F32, VType: quant.F32})
	s := small.NewScheduler(SchedulerConfig{WatermarkBlocks: -1})
	for i := range 3 {
		_, err := s.Add(greedy([]int{1, 10 + i, 20 + i}, 60))
		require.NoError(t, err)
	}
	require.NoError(t, s.RunAll(func(Token) error { return nil }))
	for i := range 3 {
		require.NoError(t, s.Err(i))
		require.Len(t, s.Result(i).Outputs[0], 60)
	}
	require.Positive(t, s.Stats().Preemptions, "the pool was too small for all three")
	require.Positive(t, small.pool.Stats().BlocksReclaimed)
}

// TestSlidingWindowLongPromptInAPoolSmallerThanIt: a prompt (and its recomputation after a
// preemption) much longer than the pool is computed window by window, releasing what it slid
// past, so it runs in a pool that could never hold it whole.
func TestSlidingWindowLongPromptInAPoolSmallerThanIt(t *testing.T) {
	t.Parallel()

	const w, bs = 16, 4
	m := swaModel(t, w)
	e := newEngine(t, m, Config{BlockSize: bs, CacheBlocks: 12, KType: quant.F32, VType: quant.F32})
	prompt := make([]int, 300) // 75 blocks of 4; the pool has 12
	for i := range prompt {
		prompt[i] = 1 + i%200
	}
	toks, res := collect(t, e, greedy(prompt, 20))
	require.Len(t, toks, 20)
	require.Len(t, res.Outputs[0], 20)
	require.NoError(t, e.pool.Check())
}
