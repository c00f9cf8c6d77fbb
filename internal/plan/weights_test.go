package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWeightTypes checks the bits per weight of every format and the rounding of Bytes.
func TestWeightTypes(t *testing.T) {
	t.Parallel()

	bits := map[string]float64{"f32": 32, "f16": 16, "bf16": 16, "q8_0": 8.5, "q4_0": 4.5, "q4_k": 4.5, "q6_k": 6.5625}
	require.Len(t, WeightTypes(), len(bits))
	for _, wt := range WeightTypes() {
		require.Equal(t, bits[wt.Name], wt.BitsPerWeight(), wt.Name)
		got, err := ParseWeightType(wt.Name)
		require.NoError(t, err)
		require.Equal(t, wt, got)
	}
	const llama2 = 6_738_415_616
	for _, tc := range []struct {
		name   string
		params int64
		want   int64
	}{
		{"f32", llama2, 4 * llama2},
		{"f16", llama2, 2 * llama2},
		{"q8_0", llama2, llama2 / 32 * 34},
		{"q4_0", 64, 36},
		{"q4_k", 256, 144},
		{"q6_k", 256, 210},
		{"q6_k", 1, 1},   // 0.82 bytes round up
		{"q4_0", 33, 19}, // 18.5625 round up
		{"f16", 0, 0},
	} {
		wt, err := ParseWeightType(tc.name)
		require.NoError(t, err)
		require.Equal(t, tc.want, wt.Bytes(tc.params), "%s × %d", tc.name, tc.params)
	}
	require.Equal(t, "f16", DefaultWeightType.Name)

	wt, err := ParseWeightType("FP16")
	require.NoError(t, err)
	require.Equal(t, "f16", wt.Name)
	_, err = ParseWeightType("q3_k")
	require.ErrorContains(t, err, `unknown weights type "q3_k"`)
	require.ErrorContains(t, err, "q6_k")
}
