package logit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestArgmaxTiesAndNaN(t *testing.T) {
	t.Parallel()

	require.Equal(t, 1, Argmax([]float32{1, 3, 3, 2}))
	nan := float32(math.NaN())
	require.Equal(t, 2, Argmax([]float32{nan, -5, 0, nan}))
	require.Equal(t, 0, Argmax([]float32{nan, nan}))
}

// TestSoftmaxAndLogSoftmaxAgree: exp(LogSoftmax) is Softmax up to float64 rounding, both sum
// to 1, and the values match a direct computation on small logits.
func TestSoftmaxAndLogSoftmaxAgree(t *testing.T) {
	t.Parallel()

	r := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 8)
	}
	p, lp := Softmax(logits), LogSoftmax(logits)
	sum := 0.0
	for i := range p {
		require.InDelta(t, p[i], math.Exp(lp[i]), 1e-12)
		sum += p[i]
	}
	require.InDelta(t, 1, sum, 1e-12)
	// Two logits: p = 1/(1+e^-d).
	q := Softmax([]float32{2, 0})
	require.InDelta(t, 1/(1+math.Exp(-2)), q[0], 1e-15)
	require.InDelta(t, math.Log(1/(1+math.Exp(-2))), LogSoftmax([]float32{2, 0})[0], 1e-15)
}

// TestTopKIsSortOrder: TopK equals the first k of a full stable sort by (value desc, id asc,
// NaN last), for every k, on data with many ties.
func TestTopKIsSortOrder(t *testing.T) {
	t.Parallel()

	r := rand.New(rand.NewPCG(3, 4))
	v := make([]float32, 300)
	for i := range v {
		v[i] = float32(r.IntN(20)) // many ties
	}
	v[7], v[100] = float32(math.NaN()), float32(math.NaN())
	order := make([]int, len(v))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return better(v, a, b) })
	for _, k := range []int{0, 1, 2, 5, 50, 299, 300, 400} {
		want := order[:min(k, len(v))]
		if k == 0 {
			want = nil
		}
		require.Equal(t, want, TopK(v, k), "k=%d", k)
	}
	require.Equal(t, []int{1, 0}, TopK([]float64{0.5, 0.7}, 5))
}

func TestRankCountsBetterTokens(t *testing.T) {
	t.Parallel()

	l := []float32{1, 5, 5, 3}
	require.Equal(t, []int{4, 1, 2, 3}, []int{Rank(l, 0), Rank(l, 1), Rank(l, 2), Rank(l, 3)})
}

func TestContinuationSeed(t *testing.T) {
	t.Parallel()

	require.Equal(t, uint64(42), ContinuationSeed(42, 0))
	require.NotEqual(t, ContinuationSeed(42, 1), ContinuationSeed(42, 2))
	require.NotEqual(t, ContinuationSeed(42, 1), ContinuationSeed(43, 1))
}

// TestTopPairs: the pairs are the ids and values of the largest logits, best first, ties
// by lower id.
func TestTopPairs(t *testing.T) {
	t.Parallel()

	got := TopPairs([]float32{0.5, 2, -1, 2, 1.25}, 3)
	require.Equal(t, [][2]float64{{1, 2}, {3, 2}, {4, 1.25}}, got)
	require.Empty(t, TopPairs([]float32{1}, 0))
}
