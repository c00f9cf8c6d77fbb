package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/half"
	"github.com/kvref/kvref/internal/kernels"
)

// The quantized row dots run in internal/kernels (whose tests hold the assembly to the
// portable Go, bit for bit); the tests here check what they compute against the
// dequantized rows and an input quantized by this file's own copy of ggml's quantizers,
// and the half-float row dots of internal/kernels against F16ToF32 and BF16ToF32.

// sameFloat reports whether got is want, bit for bit, or both are NaN when the inputs
// hold NaNs whose propagation is unspecified (see package kernels).
func sameFloat(want, got float32, strict bool) bool {
	return math.Float32bits(want) == math.Float32bits(got) || (!strict && want != want && got != got)
}

// onlyDefaultNaNs reports whether every NaN in v is the default NaN 0xffc00000.
func onlyDefaultNaNs(vs ...[]float32) bool {
	for _, v := range vs {
		for _, f := range v {
			if f != f && math.Float32bits(f) != 0xffc00000 {
				return false
			}
		}
	}
	return true
}

// TestDotRowsMatchesDotRow: DotRows gives DotRow for every row, for every type (q8_0 and
// q4_0 several rows at a time), and leaves the rest of out alone.
func TestDotRowsMatchesDotRow(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(32, 32))
	for _, wt := range WeightTypes() {
		for _, n := range []int{wt.BlockSize(), 2 * wt.BlockSize(), 4096} {
			rb, err := wt.RowBytes(n)
			require.NoError(t, err)
			for rows := 0; rows <= 9; rows++ {
				x := weightTestRow(rng, "normal", n, 1)
				w := randomWeightBlocks(wt, rows*n/wt.BlockSize(), func() byte { return byte(rng.Uint32()) })
				out := make([]float32, rows+2)
				for i := range out {
					out[i] = -7
				}
				wt.DotRows(out[1:rows+1], x, w)
				require.Equal(t, float32(-7), out[0], "%v", wt)
				require.Equal(t, float32(-7), out[rows+1], "%v", wt)
				for r := range rows {
					want := wt.DotRow(x, w[r*rb:(r+1)*rb])
					require.Equal(t, math.Float32bits(want), math.Float32bits(out[1+r]), "%v n=%d rows=%d row %d", wt, n, rows, r)
				}
			}
		}
	}
}

// TestDotRowsPanics: DotRows checks the lengths as DotRow does.
func TestDotRowsPanics(t *testing.T) {
	t.Parallel()

	for _, wt := range WeightTypes() {
		n := wt.BlockSize()
		rb, _ := wt.RowBytes(n)
		x := make([]float32, n)
		require.Panics(t, func() { wt.DotRows(make([]float32, 3), x, make([]byte, 3*rb-1)) }, "%v: short rows", wt)
		require.Panics(t, func() { wt.DotRows(make([]float32, 3), x[:8], make([]byte, 3*rb)) }, "%v: partial block", wt)
		require.NotPanics(t, func() { wt.DotRows(make([]float32, 3), x, make([]byte, 3*rb+5)) }, "%v: longer rows", wt)
	}
	require.Panics(t, func() { WeightType(200).DotRows(nil, nil, nil) })
}

// TestKernelHalfRowDots: kernels.DotF16 and kernels.DotBF16 are kernels.Dot of the row
// decoded by F16ToF32 and BF16ToF32, for any bit patterns (Inf, NaN, subnormal halves),
// any length, and misaligned rows.
func TestKernelHalfRowDots(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(33, 33))
	for _, n := range []int{1, 7, 8, 31, 32, 33, 64, 100, 4097} {
		for rep := range 8 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			buf := make([]byte, 2*n+rep)
			row := buf[rep:]
			for i := 0; i < n; i++ {
				h := uint16(rng.Uint32())
				if rep < 4 { // finite halves of both kinds only, so that the bits are pinned down
					h = half.F32ToF16(float32(rng.NormFloat64()) * []float32{1, 1e-6, 6e4, 1e3}[rep])
				}
				binary.LittleEndian.PutUint16(row[2*i:], h)
			}
			f16, bf16 := make([]float32, n), make([]float32, n)
			for i := range n {
				h := binary.LittleEndian.Uint16(row[2*i:])
				f16[i], bf16[i] = half.F16ToF32(h), half.BF16ToF32(h)
			}
			want, got := kernels.Dot(x, f16), kernels.DotF16(x, row)
			require.True(t, sameFloat(want, got, onlyDefaultNaNs(f16)), "f16 n=%d rep=%d: %#08x vs %#08x", n, rep, math.Float32bits(got), math.Float32bits(want))
			want, got = kernels.Dot(x, bf16), kernels.DotBF16(x, row)
			require.True(t, sameFloat(want, got, onlyDefaultNaNs(bf16)), "bf16 n=%d rep=%d: %#08x vs %#08x", n, rep, math.Float32bits(got), math.Float32bits(want))
		}
	}
}
