package quant

import (
	"encoding/hex"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/kernels"
)

// mustHex decodes a hex string in a test table.
func mustHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// formulaRow is the deterministic row of the small golden tests:
// x_i = ((7i² + 3i) mod 101 − 50)/17, in float32 (a correctly rounded division, the same
// everywhere).
func formulaRow(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((i*i*7+3*i)%101-50) / 17
	}
	return x
}

func TestQ8_0WeightsDequantizeHandBuilt(t *testing.T) {
	t.Parallel()

	row := make([]byte, 3*34)
	// Block 0: d = 0.5 (fp16 0x3800); q = -128, -127, -1, 0, 1, 2, 127, then 7..31.
	row[0], row[1] = 0x00, 0x38
	copy(row[2:], []byte{0x80, 0x81, 0xff, 0x00, 0x01, 0x02, 0x7f})
	for j := 7; j < 32; j++ {
		row[2+j] = byte(j)
	}
	// Block 1: d = 2^-24, the smallest subnormal half (0x0001); q = 3 everywhere.
	row[34], row[35] = 0x01, 0x00
	for j := 0; j < 32; j++ {
		row[36+j] = 3
	}
	// Block 2: d = -2 (0xc000); q = 5 everywhere.
	row[68], row[69] = 0x00, 0xc0
	for j := 0; j < 32; j++ {
		row[70+j] = 5
	}
	y := make([]float32, 96)
	WeightQ8_0.DequantizeRow(y, row)
	require.Equal(t, []float32{-64, -63.5, -0.5, 0, 0.5, 1, 63.5, 3.5, 4}, y[:9])
	require.Equal(t, float32(15.5), y[31])
	require.Equal(t, float32(3*0x1p-24), y[32])
	require.Equal(t, float32(-10), y[95])
}

// TestQ8_0WeightsQuantizeHandDerived follows quantize_row_q8_0_ref by hand for the block
// x_j = j − 16: amax = 16, d = 16/127 = 0.12598425 in float32, stored as fp16 0x3008
// (0.1259765625); id = 1/d = 7.9375 exactly, so q = roundf(7.9375·(j − 16)): multiples
// of 8 up to |x| = 8, where 7.9375·8 = 63.5 rounds away from zero to 64, and one less in
// magnitude beyond (−127 for −16, 71 for 9, 119 for 15).
func TestQ8_0WeightsQuantizeHandDerived(t *testing.T) {
	t.Parallel()

	x := make([]float32, 32)
	for j := range x {
		x[j] = float32(j - 16)
	}
	q, y := quantizeWeights(t, WeightQ8_0, x)
	want := []int8{-127, -119, -111, -103, -95, -87, -79, -71, -64, -56, -48, -40, -32, -24, -16, -8,
		0, 8, 16, 24, 32, 40, 48, 56, 64, 71, 79, 87, 95, 103, 111, 119}
	require.Equal(t, []byte{0x08, 0x30}, q[:2])
	for j, w := range want {
		require.Equal(t, w, int8(q[2+j]), "q[%d]", j)
		require.Equal(t, float32(w)*0.1259765625, y[j], "y[%d]", j)
	}
	require.Equal(t, mustHex(t, "083081899199a1a9b1b9c0c8d0d8e0e8f0f8000810182028303840474f575f676f77"), q,
		"bytes computed by ggml's quantize_row_q8_0_ref")
}

func TestQ8_0WeightsFormulaGolden(t *testing.T) {
	t.Parallel()

	q, _ := quantizeWeights(t, WeightQ8_0, formulaRow(64))
	// quantize_row_q8_0_ref of formulaRow(64).
	require.Equal(t, mustHex(t, "ee25819ad738bb632e1c2e63bb38d79a818bb90a7f17d2b1b4da249021d5aca7c608cf256ff6a075687fb515933c03eefd3184009b60434b77c236ca81626281ca36c277"), q)
}

// TestQ8_0WeightsMatchCacheCodec: the q8_0 weight type and the q8_0 cache type store the
// same format, and for every block whose 1/d is finite they produce the same bytes.
func TestQ8_0WeightsMatchCacheCodec(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(2, 3))
	for _, kind := range []string{"normal", "outliers", "heavy"} {
		x := weightTestRow(rng, kind, 1024, 0.7)
		q, y := quantizeWeights(t, WeightQ8_0, x)
		cache := make([]byte, Q8_0.RowBytes(1, len(x)))
		Q8_0.Encode(cache, x, 1, len(x))
		require.Equal(t, cache, q, kind)
		decoded := make([]float32, len(x))
		Q8_0.Decode(decoded, cache, 1, len(x))
		require.Equal(t, decoded, y, kind)
	}
}

// TestQ8_0WeightsTinyBlockIsX86: for amax below about 4e-37, ggml's 1/d overflows and
// (int8_t)roundf(±Inf or NaN) is undefined in C; x86-64 stores 0, and so does kvref. The
// fp16 d is 0, so the block decodes to zeros either way.
func TestQ8_0WeightsTinyBlockIsX86(t *testing.T) {
	t.Parallel()

	x := make([]float32, 32)
	for j := range x {
		x[j] = 1e-38 * float32(j%5-2)
	}
	q, y := quantizeWeights(t, WeightQ8_0, x)
	require.Equal(t, make([]byte, 34), q, "ggml's bytes on x86-64")
	for _, v := range y {
		require.Zero(t, v)
	}
	require.True(t, math.IsInf(float64(1/(absf(x[0])/127)), 1), "the block exercises the overflowing 1/d")
}

// TestQ8_0DotRowQuantizesTheInput: a q8_0 row takes its input quantized to Q8_0, as ggml's
// matrix product does. DotRow and DotRows are kernels.DotQ8_0Q8 of the quantized input,
// bit for bit, and stay within the input's rounding of the exact product with the
// dequantized row: per block, half a step of max|x|/127 per value (plus the fp16 rounding
// of that step) times Σ|v|, plus float32 rounding.
func TestQ8_0DotRowQuantizesTheInput(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(2, 8))
	for _, n := range []int{32, 64, 96, 2048, 11008} {
		for rep := range 4 {
			x := weightTestRow(rng, "normal", n, 1)
			rows := 5
			w := make([]byte, 0, rows*n/32*34)
			for range rows {
				row, _ := quantizeWeights(t, WeightQ8_0, weightTestRow(rng, "heavy", n, 0.3))
				w = append(w, row...)
			}
			var in kernels.Q8Input
			in.Quantize(x)
			out := make([]float32, rows)
			WeightQ8_0.DotRows(out, x, w)
			rb := n / 32 * 34
			for r := range rows {
				row := w[r*rb : (r+1)*rb]
				want := kernels.DotQ8_0Q8(&in, row)
				got := WeightQ8_0.DotRow(x, row)
				require.Equal(t, math.Float32bits(want), math.Float32bits(got), "n=%d rep=%d row %d: DotRow", n, rep, r)
				require.Equal(t, math.Float32bits(want), math.Float32bits(out[r]), "n=%d rep=%d row %d: DotRows", n, rep, r)

				v := make([]float32, n)
				WeightQ8_0.DequantizeRow(v, row)
				var exact, bound float64
				for b := 0; b < n/32; b++ {
					var amax, sumV float64
					for j := b * 32; j < (b+1)*32; j++ {
						exact += float64(x[j]) * float64(v[j])
						amax = math.Max(amax, math.Abs(float64(x[j])))
						sumV += math.Abs(float64(v[j]))
					}
					step := amax / 127
					bound += sumV * (step/2 + 127*step*0x1p-11)
				}
				var mag float64
				for j := range x {
					mag += math.Abs(float64(x[j]) * float64(v[j]))
				}
				bound += mag * 1e-5
				require.InDelta(t, exact, float64(got), bound, "n=%d rep=%d row %d", n, rep, r)
			}
		}
	}
}
