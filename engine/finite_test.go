package engine

import (
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
