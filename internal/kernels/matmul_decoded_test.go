package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMatMulRowsDecodedIsMatMulRows: a matrix stored as halves multiplies like its
// decoded float32 copy, bit for bit, at every level, for blocks of rows and of inputs
// with every remainder; each row is decoded exactly once per block of inputs (InputBlocks),
// and nothing outside the rows' outputs is written.
func TestMatMulRowsDecodedIsMatMulRows(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implMatMulAVX)
		rng := rand.New(rand.NewPCG(40, 40))
		for _, c := range []struct {
			kind                          halfKind
			rows, cols, batch, start, end int
		}{
			{halfNormal, 70, 776, 139, 0, 70},
			{halfNormal, 41, 256, 67, 3, 38},
			{halfExtreme, 36, 64, 14, 0, 36},
			{halfBits, 9, 40, 8, 1, 9},
			{halfNormal, 13, 33, 5, 0, 13},     // cols not a multiple of 8
			{halfNormal, 6, 16, 1, 0, 6},       // one input vector
			{halfNormal, 37, 4104, 137, 1, 37}, // several blocks of inputs, each decoding the rows again
		} {
			raw, w := halfMatrix(rng, c.kind, "f16", c.rows*c.cols)
			x := make([]float32, c.batch*c.cols)
			fill(rng, kindMixed, x)
			want, got := matMulRowsWant(w, x, c.rows, c.cols, c.batch, c.start, c.end)
			decoded := map[int]int{}
			MatMulRowsDecoded(got, x, c.rows, c.cols, c.batch, c.start, c.end, func(dst []float32, r int) {
				decoded[r]++
				DecodeF16(dst, raw[2*r*c.cols:])
			})
			what := fmt.Sprintf("%s rows=%d cols=%d batch=%d [%d,%d)", c.kind, c.rows, c.cols, c.batch, c.start, c.end)
			requireSameResults(t, want, got, onlyDefaultNaN(w, x), what)
			require.Len(t, decoded, c.end-c.start, what)
			blocks := InputBlocks(c.cols, c.batch)
			if c.batch > 100 && c.cols > 4000 && implMatMulAVX.on {
				require.Greater(t, blocks, 1, "%s: the case meant to split the inputs does not", c.kind)
			}
			for r, n := range decoded {
				require.Equal(t, blocks, n, "%s: row %d decoded %d times", what, r, n)
			}
		}
	})
}

// TestMatMulRowsDecodedPanics: short outputs or inputs panic, as MatMulRows does.
func TestMatMulRowsDecodedPanics(t *testing.T) {
	decode := func(dst []float32, r int) { clear(dst) }
	require.Panics(t, func() { MatMulRowsDecoded(make([]float32, 7), make([]float32, 16), 4, 8, 2, 0, 4, decode) })
	require.Panics(t, func() { MatMulRowsDecoded(make([]float32, 8), make([]float32, 15), 4, 8, 2, 0, 4, decode) })
	require.NotPanics(t, func() { MatMulRowsDecoded(make([]float32, 8), make([]float32, 16), 4, 8, 2, 2, 2, decode) })
}

// BenchmarkMatMulRowsDecoded multiplies an F16 matrix, decoded a block of rows at a time,
// by a batch of vectors at every kernel level this CPU has (a TinyLlama-shape prefill's
// projections, 2048 columns and the down projection's 5632, and a decode step of 16
// sequences), reporting the CPU time of the benchmark's thread per flop: the decoding
// (prefetching the next block's rows, as the model's matrices do) is part of the cost.
func BenchmarkMatMulRowsDecoded(b *testing.B) {
	for _, c := range []struct{ rows, cols, batch int }{{2048, 2048, 256}, {2048, 5632, 90}, {2048, 2048, 16}, {2048, 5632, 16}} {
		rng := rand.New(rand.NewPCG(41, 41))
		raw := make([]byte, 2*c.rows*c.cols)
		for i := 0; i < c.rows*c.cols; i++ {
			putLE16(raw[2*i:], halfPattern(rng, halfNormal, "f16", 1))
		}
		x := randomFloats(c.batch*c.cols, 4)
		out := make([]float32, c.batch*c.rows)
		decode := func(dst []float32, r int) { // as MatMulF16's for the batches it widens
			if next := r + DecodedPanelRows; next < c.rows {
				PrefetchL2(raw[2*next*c.cols : 2*(next+1)*c.cols])
			}
			DecodeF16(dst, raw[2*r*c.cols:])
		}
		for _, l := range testLevels() {
			b.Run(fmt.Sprintf("%dx%d/batch=%d/%s", c.rows, c.cols, c.batch, l), func(b *testing.B) {
				defer atLevel(l)()
				flops := 2 * float64(c.rows) * float64(c.cols) * float64(c.batch)
				cpuLoop(b, flops, func() { MatMulRowsDecoded(out, x, c.rows, c.cols, c.batch, 0, c.rows, decode) })
			})
		}
	}
}
