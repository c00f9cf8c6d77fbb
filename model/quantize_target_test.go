package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/quant"
)

// TestParseQuantizeTarget: the float names and every weight type's name give their GGUF
// tensor type (ggml's numbers: Q8_0 is 8, Q4_K 12); anything else is refused with the list.
func TestParseQuantizeTarget(t *testing.T) {
	t.Parallel()

	for name, want := range map[string]gguf.TensorType{"f32": gguf.F32, "F16": gguf.F16, "bf16": gguf.BF16, "q8_0": 8, "q4_k": 12} {
		got, err := ParseQuantizeTarget(name)
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
	for _, wt := range quant.WeightTypes() {
		got, err := ParseQuantizeTarget(wt.String())
		require.NoError(t, err)
		require.Equal(t, gguf.TensorType(wt.GGMLType()), got)
		require.Contains(t, QuantizedTypeNames(), wt.String())
	}
	_, err := ParseQuantizeTarget("q3_xs")
	require.ErrorContains(t, err, `"q3_xs": one of f32, f16, bf16, `+QuantizedTypeNames())
	require.Len(t, strings.Split(QuantizedTypeNames(), ", "), len(quant.WeightTypes()))
}
