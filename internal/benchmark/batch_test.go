package benchmark

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
)

// TestBatchesInterleavesRounds: with three rounds every size is measured three times in
// the order 1, 3, 1, 3, 1, 3; each row is a measured round and its speedup the median of
// the rounds' own ratios, which the table prints with their range.
func TestBatchesInterleavesRounds(t *testing.T) {
	t.Parallel()

	shape, err := synth.ShapeByName("tiny")
	require.NoError(t, err)
	m, err := shape.Model()
	require.NoError(t, err)
	defer m.Close()
	var order []int
	res, err := Batches(m, Setup{Threads: 1}, []int{1, 3}, 4, 3, 3, func(b, round int) { order = append(order, b, round) })
	require.NoError(t, err)
	require.Equal(t, []int{1, 0, 3, 0, 1, 1, 3, 1, 1, 2, 3, 2}, order)
	require.Len(t, res, 2)
	for _, r := range res {
		require.Equal(t, 3, r.Rounds)
		require.Len(t, r.SpeedupsOverBatch1, 3)
		require.Equal(t, Median(r.SpeedupsOverBatch1), r.SpeedupOverBatch1)
		require.Positive(t, r.TokensPerSecond)
	}
	require.Equal(t, []float64{1, 1, 1}, res[0].SpeedupsOverBatch1, "batch 1 against itself")

	var out strings.Builder
	WriteBatches(&out, res, MemoryBoundBatch{})
	require.Contains(t, out.String(), "3 interleaved rounds")
	require.Contains(t, out.String(), "1.00 [1.00–1.00]")
}

// TestMedianRunPicksAMeasuredRound: the row shown is one of the rounds (the slower middle
// one of an even number), not an average of them.
func TestMedianRunPicksAMeasuredRound(t *testing.T) {
	t.Parallel()

	runs := []BatchResult{{TokensPerSecond: 30, Steps: 1}, {TokensPerSecond: 10, Steps: 2}, {TokensPerSecond: 20, Steps: 3}}
	require.Equal(t, 3, medianRun(runs).Steps)
	require.Equal(t, 2, medianRun(runs[:2]).Steps, "of two rounds, the slower")
}
