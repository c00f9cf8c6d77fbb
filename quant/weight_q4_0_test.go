package quant

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQ4_0DequantizeHandBuilt: d = 2 (fp16 0x4000) and qs[j] = j | (15−j)<<4, so value j
// (low nibble j) is (j−8)·2 and value 16+j (high nibble 15−j) is (7−j)·2.
func TestQ4_0DequantizeHandBuilt(t *testing.T) {
	t.Parallel()

	row := []byte{0x00, 0x40}
	for j := 0; j < 16; j++ {
		row = append(row, byte(j)|byte(15-j)<<4)
	}
	y := make([]float32, 32)
	WeightQ4_0.DequantizeRow(y, row)
	want := []float32{-16, -14, -12, -10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10, 12, 14,
		14, 12, 10, 8, 6, 4, 2, 0, -2, -4, -6, -8, -10, -12, -14, -16}
	require.Equal(t, want, y)
}

// TestQ4_0QuantizeHandDerived follows quantize_row_q4_0_ref by hand for x_j = j − 16. The
// value of largest magnitude is x_0 = −16, so d = −16/−8 = 2 (fp16 0x4000) and
// id = 0.5; value j becomes trunc(0.5·x_j + 8.5): (j+1)/2 for j = 0..15 (halves round up:
// x = −15 gives 1, i.e. −14) and 8 + (j+1)/2 for value 16+j, clamped to 15 for j = 15.
func TestQ4_0QuantizeHandDerived(t *testing.T) {
	t.Parallel()

	x := make([]float32, 32)
	for j := range x {
		x[j] = float32(j - 16)
	}
	q, y := quantizeWeights(t, WeightQ4_0, x)
	require.Equal(t, mustHex(t, "0040809191a2a2b3b3c4c4d5d5e6e6f7f7f8"), q, "bytes computed by ggml's quantize_row_q4_0_ref")
	for j := 0; j < 16; j++ {
		require.Equal(t, float32(((j+1)/2-8)*2), y[j], "y[%d]", j)
		require.Equal(t, float32((min(15, 8+(j+1)/2)-8)*2), y[16+j], "y[%d]", 16+j)
	}
}

// TestQ4_0ClampsTheOppositeExtreme: with x = (8, −8, 0, ...), max = 8 gives d = −1, so 8
// becomes q = 0 (−8·d = 8) but −8 would need q = 16 and is clamped to 15, i.e. −7: the
// one-step error the lopsided grid allows.
func TestQ4_0ClampsTheOppositeExtreme(t *testing.T) {
	t.Parallel()

	x := make([]float32, 32)
	x[0], x[1] = 8, -8
	q, y := quantizeWeights(t, WeightQ4_0, x)
	require.Equal(t, mustHex(t, "00bc808f8888888888888888888888888888"), q, "bytes computed by ggml's quantize_row_q4_0_ref")
	require.Equal(t, float32(8), y[0])
	require.Equal(t, float32(-7), y[1])
}

// TestQ4_0ZeroBlock: for an all-zero block ggml computes d = 0/−8 = −0, stores fp16
// 0x8000, and every nibble is trunc(0 + 8.5) = 8; the values decode to 0·(−0) = −0.
func TestQ4_0ZeroBlock(t *testing.T) {
	t.Parallel()

	q, y := quantizeWeights(t, WeightQ4_0, make([]float32, 32))
	require.Equal(t, mustHex(t, "008088888888888888888888888888888888"), q)
	for _, v := range y {
		require.True(t, v == 0 && math.Signbit(float64(v)))
	}
}

// TestQ4_0TinyBlockIsX86: when 1/d overflows, x·id is ±Inf or NaN and ggml's
// (int8_t)(x·id + 8.5f) is undefined; x86-64 (and kvref) store nibble 0.
func TestQ4_0TinyBlockIsX86(t *testing.T) {
	t.Parallel()

	x := make([]float32, 32)
	for j := range x {
		x[j] = 1e-38 * float32(j%5-2)
	}
	q, _ := quantizeWeights(t, WeightQ4_0, x)
	require.Equal(t, make([]byte, 18), q, "ggml's bytes on x86-64")
}

func TestQ4_0FormulaGolden(t *testing.T) {
	t.Parallel()

	q, _ := quantizeWeights(t, WeightQ4_0, formulaRow(64))
	// quantize_row_q4_0_ref of formulaRow(64).
	require.Equal(t, mustHex(t, "e2354092f59c543e3b6aab1ea45c35224081c4b5e1294e3101c05db7ff2428f9b855cf08"), q)
}
