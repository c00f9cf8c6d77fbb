package quant

import (
	"encoding/binary"
	"fmt"
	"github.com/kvref/kvref/internal/half"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The q4_0 row dots run in internal/kernels (SIMD where the CPU has it); the Go loop
// dotQ4_0 of this package is their portable twin. These tests hold the kernels to the twin
// and to kernels.Dot of DequantizeRow, bit for bit, and the half-float row dots of
// internal/kernels to F16ToF32 and BF16ToF32. (q8_0 rows take a quantized input, see
// TestQ8_0DotRowQuantizesTheInput.)

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

// kernelRowScale returns an fp16 scale of the given kind.
func kernelRowScale(rng *rand.Rand, kind string) uint16 {
	switch kind {
	case "normal":
		return half.F32ToF16(float32(rng.NormFloat64()) / 64)
	case "extreme": // largest, smallest subnormal, zero, −0, ±Inf, default NaN
		return []uint16{0x7bff, 0xfbff, 0x0001, 0x8001, 0x0000, 0x8000, 0x7c00, 0xfc00, 0xfe00}[rng.IntN(9)]
	case "subnormal":
		return uint16(rng.Uint32N(0x400)) | uint16(rng.Uint32N(2))<<15
	default: // any bits, NaN payloads included
		return uint16(rng.Uint32())
	}
}

// kernelTestRow returns nblocks random q8_0 or q4_0 blocks with scales of the kind,
// starting off bytes into its buffer.
func kernelTestRow(rng *rand.Rand, wt WeightType, nblocks, off int, kind string) []byte {
	bb := wt.BlockBytes()
	buf := make([]byte, off+nblocks*bb)
	row := buf[off:]
	for i := range row {
		row[i] = byte(rng.Uint32())
		if kind == "extreme" && rng.IntN(4) == 0 {
			row[i] = []byte{0x80, 0x7f, 0x00, 0xff}[rng.IntN(4)]
		}
	}
	for b := range nblocks {
		binary.LittleEndian.PutUint16(row[b*bb:], kernelRowScale(rng, kind))
	}
	return row
}

// TestKernelRowDotsMatchGoTwins: DotRow for q4_0 (the kernels) equals this package's Go
// loop and kernels.Dot of the dequantized row, for scales that are normal,
// extreme (largest, subnormal, ±0, ±Inf, NaN) or any bits, misaligned slices, and lengths
// of one block to model-sized rows.
func TestKernelRowDotsMatchGoTwins(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	twins := map[WeightType]func(x []float32, row []byte) float32{WeightQ4_0: dotQ4_0}
	for _, wt := range []WeightType{WeightQ4_0} {
		for _, kind := range []string{"normal", "extreme", "subnormal", "bits"} {
			for _, n := range []int{32, 64, 96, 128, 160, 2048, 4096 + 32} {
				for rep := range 6 {
					xb := make([]float32, n+rep)
					x := xb[rep : n+rep]
					for i := range x {
						x[i] = float32(rng.NormFloat64())
						if rep%3 == 2 && rng.IntN(16) == 0 {
							x[i] = []float32{0, float32(math.Copysign(0, -1)), 3e38, -1e-40, float32(math.Inf(1))}[rng.IntN(5)]
						}
					}
					row := kernelTestRow(rng, wt, n/32, rep, kind)
					y := make([]float32, n)
					wt.DequantizeRow(y, row)
					strict := onlyDefaultNaNs(x, y)
					want := kernels.Dot(x, y)
					twin := twins[wt](x, row)
					got := wt.DotRow(x, row)
					what := fmt.Sprintf("%v %s n=%d rep=%d", wt, kind, n, rep)
					require.True(t, sameFloat(want, twin, strict), "%s: Go twin %#08x, Dot %#08x", what, math.Float32bits(twin), math.Float32bits(want))
					require.True(t, sameFloat(want, got, strict), "%s: DotRow %#08x, Dot %#08x", what, math.Float32bits(got), math.Float32bits(want))
				}
			}
		}
	}
}

// TestDotRowsMatchesDotRow: DotRows gives DotRow for every row, for every type (q8_0 and
// q4_0 several rows at a time), and leaves the rest of out alone.
func TestDotRowsMatchesDotRow(t *testing.T) {
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
				assert.Equal(t, float32(-7), out[0], "%v", wt)
				assert.Equal(t, float32(-7), out[rows+1], "%v", wt)
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
	for _, wt := range WeightTypes() {
		n := wt.BlockSize()
		rb, _ := wt.RowBytes(n)
		x := make([]float32, n)
		assert.Panics(t, func() { wt.DotRows(make([]float32, 3), x, make([]byte, 3*rb-1)) }, "%v: short rows", wt)
		assert.Panics(t, func() { wt.DotRows(make([]float32, 3), x[:8], make([]byte, 3*rb)) }, "%v: partial block", wt)
		assert.NotPanics(t, func() { wt.DotRows(make([]float32, 3), x, make([]byte, 3*rb+5)) }, "%v: longer rows", wt)
	}
	assert.Panics(t, func() { WeightType(200).DotRows(nil, nil, nil) })
}

// TestKernelHalfRowDots: kernels.DotF16 and kernels.DotBF16 are kernels.Dot of the row
// decoded by F16ToF32 and BF16ToF32, for any bit patterns (Inf, NaN, subnormal halves),
// any length, and misaligned rows.
func TestKernelHalfRowDots(t *testing.T) {
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
