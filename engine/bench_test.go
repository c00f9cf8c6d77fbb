package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
)

// BenchmarkPrefixHitTimeToFirstToken measures, in one run, the time to first token of a
// 512-token prompt with nothing cached and with its first 480 tokens cached (another
// request with the same 480-token prefix ran before), and reports their ratio.
//
//	go test ./engine -run '^$' -bench PrefixHit -benchtime 3x
func BenchmarkPrefixHitTimeToFirstToken(b *testing.B) {
	m, err := synth.Default.Model()
	require.NoError(b, err)
	prefix := ramp(0, 480)
	promptA := append(append([]int(nil), prefix...), ramp(1001, 33)[1:]...)
	promptB := append(append([]int(nil), prefix...), ramp(2002, 33)[1:]...)
	var cold, warm time.Duration
	var hit int
	for b.Loop() {
		e, err := New(m, Config{Context: 1024, CacheBlocks: 128})
		require.NoError(b, err)
		req := Request{MaxTokens: 1, Sampling: Sampling{}}
		req.Prompt = promptA
		start := time.Now()
		_, err = e.Generate(req, func(Token) error { return nil })
		cold += time.Since(start)
		require.NoError(b, err)
		req.Prompt = promptB
		start = time.Now()
		res, err := e.Generate(req, func(Token) error { return nil })
		warm += time.Since(start)
		require.NoError(b, err)
		hit = res.PrefixHitTokens
		e.Close()
	}
	b.ReportMetric(float64(cold.Milliseconds())/float64(b.N), "uncached-ms")
	b.ReportMetric(float64(warm.Milliseconds())/float64(b.N), "cached-ms")
	b.ReportMetric(float64(warm)/float64(cold), "ttft-ratio")
	b.ReportMetric(float64(hit), "hit-tokens")
}

// forkBlockBound is the bound on blocks held by 8 forks of a 256-token prompt that
// each decode 32 tokens: the shared prompt, each fork's own tail, and one copied block each.
func forkBlockBound(bs int) int {
	ceil := func(a, b int) int { return (a + b - 1) / b }
	return ceil(256, bs) + 8*ceil(33, bs) + 8
}

// forkBlocks runs 8 forks of a 256-token prompt for 32 tokens each and returns the blocks
// in use at the end.
func forkBlocks(t testing.TB, bs int) int {
	m, err := microShape.Model()
	require.NoError(t, err)
	e, err := New(m, Config{BlockSize: bs, Context: 512, CacheBlocks: 8 * (512 / bs)})
	require.NoError(t, err)
	defer e.Close()
	s := e.NewScheduler(SchedulerConfig{})
	_, err = s.Add(Request{Prompt: ramp(5, 256), MaxTokens: 32, IgnoreEOS: true, N: 8,
		Sampling: Sampling{Temperature: 1, Seed: 9}})
	require.NoError(t, err)
	require.NoError(t, s.RunAll(func(Token) error { return nil }))
	return s.Stats().PeakBlocksUsed
}

func TestForksHoldFewBlocks(t *testing.T) {
	t.Parallel()

	for _, bs := range []int{1, 3, 16, 64} {
		used := forkBlocks(t, bs)
		t.Logf("block size %d: 8 forks × 32 tokens of a 256-token prompt hold %d blocks (bound %d, unshared would be %d)",
			bs, used, forkBlockBound(bs), 8*((256+32+bs-1)/bs))
		require.LessOrEqual(t, used, forkBlockBound(bs))
	}
}

// BenchmarkForkBlocks reports the blocks 8 forks hold against the bound.
//
//	go test ./engine -run '^$' -bench ForkBlocks -benchtime 1x
func BenchmarkForkBlocks(b *testing.B) {
	for _, bs := range []int{1, 16} {
		b.Run(fmt.Sprintf("block%d", bs), func(b *testing.B) {
			var used int
			for b.Loop() {
				used = forkBlocks(b, bs)
			}
			b.ReportMetric(float64(used), "blocks")
			b.ReportMetric(float64(forkBlockBound(bs)), "bound")
		})
	}
}
