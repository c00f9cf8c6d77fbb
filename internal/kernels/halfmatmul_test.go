package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/half"
)

// TestMatMulHalfIsMatMulRows: MatMulF16 and MatMulBF16 give MatMulRows's results on the
// widened matrix, bit for bit (NaN bits aside), at every level: batches from one to past
// halfRowsMaxBatch, halfRows4MaxBatch and halfRows8MaxBatch (the stored rows four by four against eights, fours,
// pairs of inputs and a last odd one, and the widened blocks of rows beyond), row ranges that leave zero to three rows
// after the groups of four, columns that are not a multiple of 8, extreme and subnormal
// values; nothing outside the ranges' outputs is written.
func TestMatMulHalfIsMatMulRows(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implF16AVX2)
		use(implHalfAVX512)
		use(implHalfAVX512x8)
		rng := rand.New(rand.NewPCG(61, 61))
		for _, f := range []struct {
			name string
			mm   func(out, x []float32, w []byte, rows, cols, batch, start, end int)
		}{{"f16", MatMulF16}, {"bf16", MatMulBF16}} {
			for _, c := range []struct {
				kind                          halfKind
				rows, cols, batch, start, end int
			}{
				{halfNormal, 11, 64, 1, 0, 11},
				{halfNormal, 13, 136, 2, 1, 13},
				{halfExtreme, 9, 64, 3, 0, 9},
				{halfSub, 16, 72, 5, 2, 15},
				{halfBits, 8, 48, 7, 0, 8},
				{halfNormal, 37, 256, 8, 3, 37},
				{halfNormal, 41, 128, 9, 0, 41},  // past halfRowsMaxBatch (AVX2)
				{halfNormal, 70, 776, 12, 5, 70}, // a block of widened rows and the rest
				{halfNormal, 45, 264, 27, 2, 43}, // past halfRows4MaxBatch
				{halfNormal, 9, 64, 64, 0, 9},    // halfRows8MaxBatch: eight groups of eight
				{halfBits, 11, 56, 70, 1, 11},    // past halfRows8MaxBatch
				{halfNormal, 29, 200, 16, 1, 29}, // two groups of eight inputs (AVX-512), one row left
				{halfExtreme, 12, 64, 24, 0, 12}, // three groups of eight
				{halfSub, 19, 48, 8, 2, 19},      // one group of eight
				{halfBits, 10, 136, 13, 0, 10},   // a group of eight, a four and a last one
				{halfNormal, 6, 33, 4, 0, 6},     // cols not a multiple of 8
				{halfBits, 53, 72, 1, 3, 50},     // one input: four quarters of 44 rows and three more
				{halfExtreme, 40, 136, 1, 0, 40}, // one input: quarters of ten rows, none left over
				{halfSub, 6, 64, 1, 1, 6},        // one input: quarters of one row
				{halfNormal, 53, 72, 2, 3, 50},   // a pair of inputs over four quarters of 11 rows
				{halfBits, 31, 64, 7, 0, 31},     // three pairs and an odd input over quarters
				{halfNormal, 90, 1000, 5, 2, 90}, // quarters of 22 rows taken 16 rows at a time
			} {
				raw, w := halfMatrix(rng, c.kind, f.name, c.rows*c.cols)
				x := make([]float32, c.batch*c.cols)
				fill(rng, kindMixed, x)
				want, got := matMulRowsWant(w, x, c.rows, c.cols, c.batch, c.start, c.end)
				f.mm(got, x, raw, c.rows, c.cols, c.batch, c.start, c.end)
				what := fmt.Sprintf("%s %s rows=%d cols=%d batch=%d [%d,%d)", f.name, c.kind, c.rows, c.cols, c.batch, c.start, c.end)
				requireSameResults(t, want, got, onlyDefaultNaN(w, x), what)
			}
		}
	})
}

// halfMatrix returns n values of kind in the 16-bit format f ("f16" or "bf16") as stored,
// little-endian (raw), and widened (w).
func halfMatrix(rng *rand.Rand, kind halfKind, f string, n int) (raw []byte, w []float32) {
	raw, w = make([]byte, 2*n), make([]float32, n)
	widen := half.F16ToF32
	if f == "bf16" {
		widen = half.BF16ToF32
	}
	for i := range w {
		v := halfPattern(rng, kind, f, 1)
		putLE16(raw[2*i:], v)
		w[i] = widen(v)
	}
	return raw, w
}

// matMulRowsWant returns MatMulRows's portable outputs for w and x (rows [start, end) of
// batch inputs) in a buffer of sentinels one longer than the outputs, and a copy of the
// sentinels for the product under test to write into.
func matMulRowsWant(w, x []float32, rows, cols, batch, start, end int) (want, got []float32) {
	want = make([]float32, batch*rows+1)
	for i := range want {
		want[i] = math.Float32frombits(0x7f8abcde)
	}
	got = slices.Clone(want)
	matMulRowsGeneric(want, w, x, rows, cols, batch, start, end)
	return want, got
}

// TestMatMulHalfPanics: short outputs, inputs or rows panic, as MatMulRows does.
func TestMatMulHalfPanics(t *testing.T) {
	w := make([]byte, 2*4*8)
	require.Panics(t, func() { MatMulF16(make([]float32, 7), make([]float32, 16), w, 4, 8, 2, 0, 4) })
	require.Panics(t, func() { MatMulF16(make([]float32, 8), make([]float32, 15), w, 4, 8, 2, 0, 4) })
	require.Panics(t, func() { MatMulBF16(make([]float32, 8), make([]float32, 16), w[:63], 4, 8, 2, 0, 4) })
	require.NotPanics(t, func() { MatMulBF16(make([]float32, 8), make([]float32, 16), w, 4, 8, 2, 0, 4) })
}

// BenchmarkMatMulF16 multiplies a 2048×2048 F16 matrix by small batches (a decode step of
// a few sequences) at every kernel level this CPU has: "stored" is MatMulF16 (the stored
// rows against fours or pairs of inputs up to halfRows4MaxBatch or halfRowsMaxBatch),
// "widened" MatMulRowsDecoded on the same rows, the path of larger batches; the CPU time
// of the benchmark's thread per flop.
func BenchmarkMatMulF16(b *testing.B) {
	const rows, cols = 2048, 2048
	rng := rand.New(rand.NewPCG(62, 62))
	raw := make([]byte, 2*rows*cols)
	for i := range rows * cols {
		putLE16(raw[2*i:], halfPattern(rng, halfNormal, "f16", 1))
	}
	for _, batch := range []int{2, 4, 8, 16} {
		x := randomFloats(batch*cols, 5)
		out := make([]float32, batch*rows)
		flops := 2 * float64(rows*cols*batch)
		for _, l := range testLevels() {
			b.Run(fmt.Sprintf("batch=%d/stored/%s", batch, l), func(b *testing.B) {
				defer atLevel(l)()
				cpuLoop(b, flops, func() { MatMulF16(out, x, raw, rows, cols, batch, 0, rows) })
			})
			b.Run(fmt.Sprintf("batch=%d/widened/%s", batch, l), func(b *testing.B) {
				defer atLevel(l)()
				cpuLoop(b, flops, func() {
					MatMulRowsDecoded(out, x, rows, cols, batch, 0, rows, func(dst []float32, r int) { DecodeF16(dst, raw[2*r*cols:]) })
				})
			})
		}
	}
}
