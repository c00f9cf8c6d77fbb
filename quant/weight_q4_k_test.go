package quant

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// q4KHandScales are the 12 packed bytes of the sub-block scales
// sc = 1, 2, 3, 4, 17, 33, 63, 48 and mins m = 0, 1, 2, 3, 20, 40, 63, 5, packed by hand:
// bytes 0-3 hold sc[0..3] with the top two bits of sc[4..7] in bits 6-7 (17>>4 = 1,
// 33>>4 = 2, 63>>4 = 3, 48>>4 = 3); bytes 4-7 hold m[0..3] with the top two bits of
// m[4..7] (1, 2, 3, 0); bytes 8-11 hold the low nibbles of sc[4..7] and, above them,
// of m[4..7] (1|4<<4, 1|8<<4, 15|15<<4, 0|5<<4).
var q4KHandScales = []byte{0x41, 0x82, 0xc3, 0xc4, 0x40, 0x81, 0xc2, 0x03, 0x41, 0x81, 0xff, 0x50}

var (
	q4KHandSc = [8]uint8{1, 2, 3, 4, 17, 33, 63, 48}
	q4KHandM  = [8]uint8{0, 1, 2, 3, 20, 40, 63, 5}
)

func TestQ4_KScaleMinPacking(t *testing.T) {
	t.Parallel()

	for j := 0; j < 8; j++ {
		sc, m := q4KScaleMin(j, q4KHandScales)
		require.Equal(t, q4KHandSc[j], sc, "sc[%d]", j)
		require.Equal(t, q4KHandM[j], m, "m[%d]", j)
	}
	p := q4KPackScales(q4KHandSc, q4KHandM)
	require.Equal(t, q4KHandScales, p[:])
}

// TestQ4_KDequantizeHandBuilt decodes a block with d = 1 (fp16 0x3c00), dmin = 0.5
// (0x3800), the hand-packed scales above and qs[b] = 7b + 3 (mod 256). Value e lies in
// sub-block j = e/32 and uses byte qs[32·(e/64) + e%32], its low nibble when j is even
// and its high nibble when j is odd; it decodes to sc[j]·q − 0.5·m[j], exact in float32.
func TestQ4_KDequantizeHandBuilt(t *testing.T) {
	t.Parallel()

	row := append([]byte{0x00, 0x3c, 0x00, 0x38}, q4KHandScales...)
	for b := 0; b < 128; b++ {
		row = append(row, byte(7*b+3))
	}
	require.Len(t, row, 144)
	y := make([]float32, 256)
	WeightQ4_K.DequantizeRow(y, row)

	// A few values worked out in full.
	require.Equal(t, float32(3), y[0], "qs[0] = 0x03, low nibble 3, sc 1, m 0")
	require.Equal(t, float32(-0.5), y[32], "qs[0] high nibble 0, sc 2, m 1: 0 − 0.5")
	require.Equal(t, float32(661.5), y[200], "qs[104] = 0xdb, low nibble 11, sc 63, m 63: 693 − 31.5")
	require.Equal(t, float32(333.5), y[255], "qs[127] = 0x7c, high nibble 7, sc 48, m 5: 336 − 2.5")

	for e := range y {
		j := e / 32
		b := byte(7*(32*(e/64)+e%32) + 3)
		q := b & 0x0f
		if j%2 == 1 {
			q = b >> 4
		}
		want := float64(q4KHandSc[j])*float64(q) - 0.5*float64(q4KHandM[j])
		require.Equal(t, float32(want), y[e], "value %d", e)
	}
}

// TestQ4_KNegativeConstant follows quantize_row_q4_K_ref by hand for a row of −1.5:
// make_qkx2_quants finds min = max = −1.5 in every sub-block and returns scale 0 and
// min 1.5, so d = 0, dmin = fp16(1.5/63) = 0x2618 (0.0238037109375), every 6-bit min is
// 63 and every scale 0, and all nibbles stay 0. The values decode to
// 0·0 − 0.0238037109375·63 = −1.4996337890625.
func TestQ4_KNegativeConstant(t *testing.T) {
	t.Parallel()

	x := make([]float32, 256)
	for i := range x {
		x[i] = -1.5
	}
	q, y := quantizeWeights(t, WeightQ4_K, x)
	want := append(mustHex(t, "0000182600000000fffffffff0f0f0f0"), make([]byte, 128)...)
	require.Equal(t, want, q, "bytes computed by ggml's quantize_row_q4_K_ref")
	for _, v := range y {
		require.Equal(t, float32(-1.4996337890625), v)
	}
}

func TestQ4_KFormulaGolden(t *testing.T) {
	t.Parallel()

	q, _ := quantizeWeights(t, WeightQ4_K, formulaRow(256))
	// quantize_row_q4_K_ref of formulaRow(256).
	require.Equal(t, mustHex(t, "611eed29fefbfcfffefdffffdedbffdbf07125fbe3fd3a991abd837b85b1008013e8cfc9f543b3450ae1e90542b244f89cfc8e3218001b58b738dba199a3df3ebf52170f183482f3955a313a55a313950542b244f8cec7e21e8d0fb389718bb716973af0e7f12d7bfc8e442b2450ad1d3a55a313a5592f284381f07125fbe3fd3a991abd837b85b1008113e8cfc9f543"), q)
}

func TestQ4_KZeroBlock(t *testing.T) {
	t.Parallel()

	q, y := quantizeWeights(t, WeightQ4_K, make([]float32, 256))
	require.Equal(t, make([]byte, 144), q)
	require.Equal(t, make([]float32, 256), y)
}
