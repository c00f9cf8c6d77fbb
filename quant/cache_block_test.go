package quant

import (
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The blocks in this file are worked out by hand from ggml's block layouts (ggml-common.h)
// and its quantize_row_*_ref / dequantize_row_* formulas, on inputs chosen so that every
// scale is exact.

// encodeBlock stores x (32 values) as one block of ct and returns the bytes and the
// decoded values.
func encodeBlock(t *testing.T, ct CacheType, x []float32) ([]byte, []float32) {
	t.Helper()
	require.Len(t, x, blockLen)
	row := encodeExact(t, ct, x, shape{1, blockLen})
	y := make([]float32, blockLen)
	ct.Decode(y, row, 1, blockLen)
	return row, y
}

// hexBytes parses hex with spaces between fields.
func hexBytes(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// nibbleRow is qs for codes c: c[j] in the low nibble of byte j, c[16+j] in its high one.
func nibbleRow(c []uint8) string {
	var b []byte
	for j := range blockHalf {
		b = append(b, c[j]&0x0f|c[blockHalf+j]<<4)
	}
	return hex.EncodeToString(b)
}

// TestQ4_1HandDerived: x_j = j/2 for j < 31 and x_31 = 7.25. min = 0, max = 15, so
// d = 15/15 = 1 (fp16 0x3C00) and m = 0; element j gets trunc(x_j + 0.5): halves round up
// (j odd gives (j+1)/2), and 7.25 gives 7. With every value shifted by −3, m = fp16(−3) =
// 0xC200 and the codes stay the same.
func TestQ4_1HandDerived(t *testing.T) {
	t.Parallel()

	x := make([]float32, blockLen)
	c := make([]uint8, blockLen)
	for j := range x {
		x[j] = float32(j) / 2
		c[j] = uint8((j + 1) / 2)
	}
	x[31], c[31] = 7.25, 7
	row, y := encodeBlock(t, Q4_1, x)
	require.Equal(t, hexBytes(t, "003c 0000 "+nibbleRow(c)), row)
	for j := range y {
		require.Equal(t, float32(c[j]), y[j], "element %d", j)
	}

	for j := range x {
		x[j] -= 3
	}
	row, y = encodeBlock(t, Q4_1, x)
	require.Equal(t, hexBytes(t, "003c 00c2 "+nibbleRow(c)), row)
	for j := range y {
		require.Equal(t, float32(c[j])-3, y[j], "element %d", j)
	}
}

// TestQ5_0HandDerived: x_j = j − 16. The value of largest magnitude is x_0 = −16, so
// d = −16/−16 = 1 (fp16 0x3C00), id = 1 and element j gets min(31, trunc(x_j + 16.5)) = j:
// qs[j] = j | j<<4, and qh has the fifth bits of codes 16..31, bits 16..31 (bytes 00 00 ff
// ff). Every value decodes exactly.
func TestQ5_0HandDerived(t *testing.T) {
	t.Parallel()

	x := make([]float32, blockLen)
	c := make([]uint8, blockLen)
	for j := range x {
		x[j] = float32(j - 16)
		c[j] = uint8(j)
	}
	row, y := encodeBlock(t, Q5_0, x)
	require.Equal(t, hexBytes(t, "003c 0000ffff "+nibbleRow(c)), row)
	require.Equal(t, x, y)
}

// TestQ5_0ClampsTheOppositeExtreme: with x = (16, −16, 0, ...), max = 16 gives d = −1, so 16
// becomes c = 0 (−16·d = 16) but −16 would need c = 32 and is clamped to 31, i.e. −15; the
// zeros are c = 16 (qh bit set).
func TestQ5_0ClampsTheOppositeExtreme(t *testing.T) {
	t.Parallel()

	x := make([]float32, blockLen)
	x[0], x[1] = 16, -16
	c := make([]uint8, blockLen)
	for j := range c {
		c[j] = 16
	}
	c[0], c[1] = 0, 31
	row, y := encodeBlock(t, Q5_0, x)
	require.Equal(t, hexBytes(t, "00bc feffffff "+nibbleRow(c)), row)
	require.Equal(t, float32(16), y[0])
	require.Equal(t, float32(-15), y[1])
}

// TestQ5_1HandDerived: x_j = j, so min = 0, max = 31, d = 31/31 = 1, m = 0 and every code
// is j (qh bits 16..31 set); every value decodes exactly.
func TestQ5_1HandDerived(t *testing.T) {
	t.Parallel()

	x := make([]float32, blockLen)
	c := make([]uint8, blockLen)
	for j := range x {
		x[j] = float32(j)
		c[j] = uint8(j)
	}
	row, y := encodeBlock(t, Q5_1, x)
	require.Equal(t, hexBytes(t, "003c 0000 0000ffff "+nibbleRow(c)), row)
	require.Equal(t, x, y)
}

// TestIQ4NLHandDerived: x_j = kvalues[j%16]/2. The value of largest magnitude is −127/2,
// so d₀ = (−63.5)/−127 = 0.5, id·x_j = kvalues[j%16] exactly, and code j%16 is chosen;
// every weighted sum term of Σ w·q·x is 0.5 times the matching term of Σ w·q² (a power
// of two commutes with rounding), so the least-squares scale is exactly 0.5 (fp16
// 0x3800). With the signs flipped, max = 63.5 gives d₀ = −0.5, the same codes for −x and
// a stored scale of −0.5 (0xB800).
func TestIQ4NLHandDerived(t *testing.T) {
	t.Parallel()

	x := make([]float32, blockLen)
	c := make([]uint8, blockLen)
	for j := range x {
		c[j] = uint8(j % 16)
		x[j] = float32(iq4nlValues[c[j]]) / 2
	}
	row, y := encodeBlock(t, IQ4_NL, x)
	require.Equal(t, hexBytes(t, "0038 "+nibbleRow(c)), row)
	require.Equal(t, x, y)

	for j := range x {
		x[j] = -x[j]
	}
	row, y = encodeBlock(t, IQ4_NL, x)
	require.Equal(t, hexBytes(t, "00b8 "+nibbleRow(c)), row)
	require.Equal(t, x, y)
}

// TestIQ4NLTiesAndZeros: with x_0 = −63.5 (d₀ = 0.5, id = 2) and x_1 = −2.25, id·x_1 = −4.5
// lies exactly between the grid points −10 (code 7) and 1 (code 8), and best_index_int8
// takes the upper one; a zero maps to the grid point nearest to 0, which is 1 (code 8): the
// grid has no zero, so iq4_nl stores an exact zero as d·1. The least-squares scale is
// (63.5²·127·63.5 − 2.25³)/(63.5²·127² + 2.25²) ≈ 0.49999992, whose fp16 is 0.5.
func TestIQ4NLTiesAndZeros(t *testing.T) {
	t.Parallel()

	x := make([]float32, blockLen)
	x[0], x[1] = -63.5, -2.25
	c := make([]uint8, blockLen)
	for j := range c {
		c[j] = 8
	}
	c[0] = 0
	row, y := encodeBlock(t, IQ4_NL, x)
	require.Equal(t, hexBytes(t, "0038 "+nibbleRow(c)), row)
	require.Equal(t, float32(-63.5), y[0])
	for j := 1; j < blockLen; j++ {
		require.Equal(t, float32(0.5), y[j], "element %d", j)
	}
}

// TestZeroBlocksAreLikeGGML: an all-zero block. q4_0 and q5_0 compute d = 0/−8 (0/−16) = −0
// (fp16 0x8000) with codes 8 (16, fifth bits set), which decode to 0·(−0) = −0; q4_1 and
// q5_1 have min = max = 0, d = 0 and codes 0: all bytes zero, values +0; iq4_nl stores d = 0
// and codes 0 (|max| < 1e-15), which decode to 0·(−127) = −0.
func TestZeroBlocksAreLikeGGML(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		ct       CacheType
		bytes    string
		negative bool
	}{
		{Q4_0, "0080 " + strings.Repeat("88", 16), true},
		{Q4_1, "0000 0000 " + strings.Repeat("00", 16), false},
		{Q5_0, "0080 ffffffff " + strings.Repeat("00", 16), true},
		{Q5_1, "0000 0000 00000000 " + strings.Repeat("00", 16), false},
		{IQ4_NL, "0000 " + strings.Repeat("00", 16), true},
	} {
		row, y := encodeBlock(t, c.ct, make([]float32, blockLen))
		require.Equal(t, hexBytes(t, c.bytes), row, c.ct.String())
		for j, v := range y {
			if !(v == 0 && math.Signbit(float64(v)) == c.negative) { // tested before require: this runs in a hot loop
				require.FailNow(t, fmt.Sprintf("%v element %d = %v", c.ct, j, v))
			}
		}
	}
}

// TestConstantBlocksAreExact: a block of equal values decodes exactly: q4_1 and q5_1 store
// d = 0 and the value as m; q4_0 has d = −3/8 and codes 0, i.e. (0−8)·(−0.375) = 3, q5_0
// d = −3/16 and codes 0. (iq4_nl's d = −3/127 is rounded to fp16, so it is not exact.)
func TestConstantBlocksAreExact(t *testing.T) {
	t.Parallel()

	x := make([]float32, blockLen)
	for j := range x {
		x[j] = 3
	}
	for _, ct := range []CacheType{Q4_0, Q4_1, Q5_0, Q5_1} {
		_, y := encodeBlock(t, ct, x)
		require.Equal(t, x, y, ct.String())
	}
	row, _ := encodeBlock(t, Q4_1, x)
	require.Equal(t, hexBytes(t, "0000 0042 "+strings.Repeat("00", 16)), row, "d = 0, m = fp16(3)")
}

// TestQ5FifthBitsAcrossHeads: the fifth bits are read per element wherever a head starts:
// heads of 8 (stories260K's width) start at elements 0, 8, 16 and 24 of a block, so head 2
// reads bits 16..23 of qh and the high nibbles of qs[0..7].
func TestQ5FifthBitsAcrossHeads(t *testing.T) {
	t.Parallel()

	x := make([]float32, blockLen)
	for j := range x {
		x[j] = float32(j - 16) // q5_0: codes j, exact (TestQ5_0HandDerived)
	}
	row := encodeExact(t, Q5_0, x, shape{4, 8})
	for h := range 4 {
		q := make([]float32, 8)
		for i := range q {
			q[i] = 1
		}
		// Σ (8h+i−16) over i = 64h + 28 − 128, exact in float32.
		require.Equal(t, float32(64*h+28-128), Q5_0.DotHead(q, row, h, 4, 8), "head %d", h)
		dst := make([]float32, 8)
		Q5_0.AxpyHead(dst, 2, row, h, 4, 8)
		for i, v := range dst {
			require.Equal(t, float32(2*(8*h+i-16)), v, "head %d element %d", h, i)
		}
	}
}
