package quant

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// q6KHandScales are the int8 sub-block scales of the hand-built Q6_K block.
var q6KHandScales = [16]int8{1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 127, -128, 0, 10, -10, 64}

// q6KHandBlock returns a Q6_K block with d = 0.25 (fp16 0x3400), the scales above, and
// all ql and qh bytes zero except ql[0] = 0x21, ql[32] = 0x5a, qh[0] = 0xe4 (first half)
// and ql[64] = 0xf3, qh[32] = 0x1b (second half).
func q6KHandBlock() []byte {
	b := make([]byte, 210)
	b[0], b[32], b[128] = 0x21, 0x5a, 0xe4
	b[64], b[128+32] = 0xf3, 0x1b
	for j, s := range q6KHandScales {
		b[192+j] = byte(s)
	}
	b[208], b[209] = 0x00, 0x34
	return b
}

// TestQ6_KDequantizeHandBuilt decodes q6KHandBlock. Each value is 0.25·scale·(q − 32),
// where value 32k+l of half h takes its low four bits from ql[64h + 32(k%2) + l] (low
// nibble for k < 2, high nibble otherwise) and its top two bits from bits 2k, 2k+1 of
// qh[32h + l], and its scale from sub-block e/16:
//
//	e = 0:   ql[0] low 1,  qh[0] bits 0-1 = 0  → q = 1:  0.25·1·(−31)   = −7.75
//	e = 1:   all zero                          → q = 0:  0.25·1·(−32)   = −8
//	e = 32:  ql[32] low 10, qh[0] bits 2-3 = 1 → q = 26: 0.25·2·(−6)    = −3
//	e = 64:  ql[0] high 2,  qh[0] bits 4-5 = 2 → q = 34: 0.25·3·2       = 1.5
//	e = 96:  ql[32] high 5, qh[0] bits 6-7 = 3 → q = 53: 0.25·4·21      = 21
//	e = 128: ql[64] low 3,  qh[32] bits 0-1 = 3 → q = 51: 0.25·5·19     = 23.75
//	e = 160: ql[96] low 0,  qh[32] bits 2-3 = 2 → q = 32: 0.25·127·0    = 0
//	e = 176: all zero                           → q = 0:  0.25·−128·−32 = 1024
//	e = 192: ql[64] high 15, qh[32] bits 4-5 = 1 → q = 31: 0.25·0·(−1)  = −0
//	e = 224: ql[96] high 0, qh[32] bits 6-7 = 0 → q = 0:  0.25·−10·−32  = 80
func TestQ6_KDequantizeHandBuilt(t *testing.T) {
	t.Parallel()

	y := make([]float32, 256)
	WeightQ6_K.DequantizeRow(y, q6KHandBlock())
	for e, want := range map[int]float32{0: -7.75, 1: -8, 32: -3, 64: 1.5, 96: 21, 128: 23.75, 160: 0, 176: 1024, 192: 0, 224: 80} {
		require.Equal(t, want, y[e], "value %d", e)
	}
	require.True(t, math.Signbit(float64(y[192])), "(0.25·0)·(−1) is −0, as in ggml")

	// Every other value has q = 0 unless it shares a byte with the ones above.
	b := q6KHandBlock()
	for e := range y {
		h, k, l := e/128, e%128/32, e%32
		lo := b[64*h+32*(k%2)+l] >> (4 * (k / 2)) & 0x0f
		hi := b[128+32*h+l] >> (2 * k) & 3
		want := float32(0.25*float64(q6KHandScales[e/16])) * float32(int(lo|hi<<4)-32)
		require.Equal(t, want, y[e], "value %d", e)
	}
}

// TestQ6_KZeroBlock: ggml stores an all-zero super-block as zero bytes; it decodes to
// (0·0)·(0 − 32) = −0.
func TestQ6_KZeroBlock(t *testing.T) {
	t.Parallel()

	q, y := quantizeWeights(t, WeightQ6_K, make([]float32, 256))
	require.Equal(t, make([]byte, 210), q)
	for _, v := range y {
		require.True(t, v == 0 && math.Signbit(float64(v)))
	}
}

func TestQ6_KFormulaGolden(t *testing.T) {
	t.Parallel()

	q, _ := quantizeWeights(t, WeightQ6_K, formulaRow(256))
	// quantize_row_q6_K_ref of formulaRow(256).
	require.Equal(t, mustHex(t, "d1f7869e0ff84b175bf81fbeb637016302ad302aeb04937ac77cf86bb5566fdea413d823d6f093ab2b118f5591548f10e66871133ef02ef26059d9d0729e508e7b95373fbea413d823d6f093ab2b118fbb7fbc81f0e76871133ef02ef26059d940a27ed08eb36178f7e0413c8f3b610fdb5b53f016b3f8c3140e7f87163be80d40084df2e0f3dea66ed7147a59740cc8837d2c0d1e37bbf6a15f3d1267bb36add2a77bf66d9ccedfb07830bbe51739092da52eb082605f8b038709eefde8d74f807d7b877b717f807b86867a7f807a850f92"), q)
}

// TestQ6_KLargestScaleIsMinus128: make_qx_quants maps a sub-block's extreme value to
// level −32, so the sub-block's scale has the opposite sign of that value; the scale of
// largest magnitude is stored as −128 and d = −scale/128, so d has the sign of the row's
// extreme value.
func TestQ6_KLargestScaleIsMinus128(t *testing.T) {
	t.Parallel()

	for _, sign := range []float32{1, -1} {
		x := formulaRow(256)
		for i := range x {
			x[i] *= sign
		}
		x[100] = 9 * sign // sub-block 6 holds the largest value
		q, _ := quantizeWeights(t, WeightQ6_K, x)
		require.Equal(t, int8(-128), int8(q[192+6]), "sign %v", sign)
		d := loadF16(q[208:])
		require.Equal(t, sign > 0, d > 0, "sign %v: d = %g", sign, d)
	}
}
