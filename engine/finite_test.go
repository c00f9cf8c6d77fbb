package engine

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model"
)

// nanModel is the tiny model with one projection full of NaN: hyper-parameters that load
// cannot cause this any more (model validates them), broken weights still can.
func nanModel(t *testing.T) *model.Model {
	t.Helper()
	m := tinyModel(t)
	wq := m.Weights.Layers[0].Wq
	bad := make([]float32, wq.Rows*wq.Cols)
	for i := range bad {
		bad[i] = float32(math.NaN())
	}
	var err error
	m.Weights.Layers[0].Wq, err = model.NewMatrixF32(wq.Name, wq.Rows, wq.Cols, bad)
	require.NoError(t, err)
	return m
}

// TestNonFiniteLogitsEndTheRequest: logits with a NaN end their request with ErrNonFinite
// naming the position, before anything is sampled or emitted, with and without --check.
func TestNonFiniteLogitsEndTheRequest(t *testing.T) {
	t.Parallel()

	e := newEngine(t, nanModel(t), Config{BlockSize: 4})
	for _, check := range []bool{false, true} {
		var toks []Token
		_, err := e.Generate(Request{Prompt: []int{1, 5, 6}, MaxTokens: 5, Check: check}, func(tk Token) error {
			toks = append(toks, tk)
			return nil
		})
		require.ErrorIs(t, err, ErrNonFinite)
		require.ErrorContains(t, err, "step 0 (position 2)")
		require.ErrorContains(t, err, "is NaN")
		require.Empty(t, toks)
		require.Zero(t, e.pool.Stats().BlocksUsed)
	}
}

// TestCheckFiniteFindsEveryNonFiniteValue: a NaN or an infinity anywhere (each of the
// branch-free pass's four lanes, and the tail past them) is found and named; finite
// extremes (the largest float32, negative zero, subnormals) pass.
func TestCheckFiniteFindsEveryNonFiniteValue(t *testing.T) {
	t.Parallel()
	finite := []float32{math.MaxFloat32, -math.MaxFloat32, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, 1, -2.5, 3e-39}
	for n := 1; n <= 11; n++ {
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = finite[i%len(finite)]
		}
		require.NoError(t, checkFinite(logits, 0, 0, 0), "%d finite logits", n)
		for at := range n {
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				saved := logits[at]
				logits[at] = bad
				err := checkFinite(logits, 1, 2, 3)
				require.ErrorIs(t, err, ErrNonFinite, "%v at %d of %d", bad, at, n)
				require.ErrorContains(t, err, fmt.Sprintf("the logit of token %d is", at))
				logits[at] = saved
			}
		}
	}
}
