package nodellama

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCompare checks the comparison on hand-made logits: the top-k error covers the union
// of both engines' top ids (so a token only llama.cpp ranks high still counts), the
// whole-vocabulary error covers every id, and the argmax and margin are kvref's.
func TestCompare(t *testing.T) {
	t.Parallel()

	kvref := [][]float32{{0, 5, 4, 1, 0}}
	run := &Run{Steps: []Step{{Step: 0, Next: 1, Logits: []float64{0.5, 5, 4, 1, 6}}}}
	d, err := Compare(kvref, run, 2)
	require.NoError(t, err)
	require.Len(t, d, 1)
	require.Equal(t, []int{1, 2}, d[0].TopKIDs)
	require.InDelta(t, 6.0, d[0].TopK, 1e-12, "id 4 is in llama.cpp's top 2: |0 − 6|")
	require.InDelta(t, 6.0, d[0].All, 1e-12)
	require.Equal(t, [2]int{1, 1}, d[0].ArgMax)
	require.InDelta(t, 1.0, d[0].Margin, 1e-12)

	run.Steps[0].Logits[4] = 0
	d, err = Compare(kvref, run, 2)
	require.NoError(t, err)
	require.InDelta(t, 0.0, d[0].TopK, 1e-12, "id 0's error (0.5) is outside both top 2")
	require.InDelta(t, 0.5, d[0].All, 1e-12)

	_, err = Compare(kvref, &Run{Steps: []Step{{Logits: []float64{1, 2}}}}, 2)
	require.ErrorContains(t, err, "kvref has 5 logits, llama.cpp 2")
	_, err = Compare(kvref, &Run{}, 2)
	require.ErrorContains(t, err, "kvref has 1 steps of logits, llama.cpp 0")
}
