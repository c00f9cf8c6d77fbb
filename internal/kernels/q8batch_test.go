package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDotQ8_0BatchIsDotQ8_0Q8: the batched Q8_0 product gives DotQ8_0Q8's bits for every row
// and vector, at every level, for odd and even block counts (the odd last block), rows
// long enough to go in chunks, odd and even row ranges, batches with and without whole groups of four, and rows with extreme
// scales and codes; it writes nothing but the outputs of the rows asked for.
func TestDotQ8_0BatchIsDotQ8_0Q8(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implQ8GemmVNNI)
		rng := rand.New(rand.NewPCG(50, 50))
		for _, c := range []struct {
			nb, rows, batch, start, end int
			scales                      halfKind
		}{
			{64, 70, 13, 0, 70, halfNormal},
			{65, 37, 9, 1, 36, halfNormal},
			{1, 9, 8, 0, 9, halfExtreme},
			{3, 12, 4, 3, 12, halfSub},
			{7, 5, 5, 0, 5, halfBits},
			{2, 4, 3, 0, 4, halfNormal},
			{24, 66, 16, 2, 65, halfExtreme},
			{2*gemmQ8ChunkBlocksTest + 1, 9, 6, 0, 9, halfNormal},  // chunks of the AVX2 and VNNI kernels, the odd block in the last
			{3*gemmQ8ChunkBlocksTest + 8, 8, 8, 1, 7, halfExtreme}, // four chunks
		} {
			n := c.nb * QBlockLen
			rb := c.nb * Q8_0BlockBytes
			w := byteBuf(c.rows*rb, rng.IntN(4))
			for r := range c.rows {
				fillRow(rng, q8Kind, c.scales, w[r*rb:(r+1)*rb], n)
			}
			in := make([]Q8Input, c.batch)
			for b := range in {
				x := make([]float32, n)
				fill(rng, []dataKind{kindNormal, kindWide, kindMixed}[b%3], x)
				in[b].Quantize(x)
			}
			var q Q8Batch
			q.Set(pointers(in))
			out := make([]float32, c.batch*c.rows)
			for i := range out {
				out[i] = math.Float32frombits(0x7f8abcde)
			}
			DotQ8_0Batch(out[c.start:], c.rows, &q, w[c.start*rb:c.end*rb], c.end-c.start)
			what := fmt.Sprintf("nb=%d rows=%d batch=%d [%d,%d) scales=%s", c.nb, c.rows, c.batch, c.start, c.end, c.scales)
			twin := make([]float32, len(out)) // the portable definition, called directly
			for i := range twin {
				twin[i] = math.Float32frombits(0x7f8abcde)
			}
			matMulQ8_0Generic(twin[c.start:], w[c.start*rb:c.end*rb], &q, c.rows, rb, 0, c.end-c.start)
			requireSameResults(t, twin, out, false, what+" (portable twin)")
			for b := range c.batch {
				for r := range c.rows {
					got := out[b*c.rows+r]
					if r < c.start || r >= c.end {
						require.Equal(t, uint32(0x7f8abcde), math.Float32bits(got), "%s: row %d vector %d was written", what, r, b)
						continue
					}
					want := dotQ8_0Q8Generic(q.Input(b), w[r*rb:(r+1)*rb])
					if !sameResult(want, got, false) {
						require.Failf(t, "DotQ8_0Batch differs from DotQ8_0Q8", "%s: row %d vector %d: %v (%#08x), want %v (%#08x)",
							what, r, b, got, math.Float32bits(got), want, math.Float32bits(want))
					}
				}
			}
		}
	})
}

// TestQ8BatchChecks: vectors of different lengths and short matrices panic.
func TestQ8BatchChecks(t *testing.T) {
	in := make([]Q8Input, 4)
	for b := range in {
		in[b].Quantize(make([]float32, 64))
	}
	var q Q8Batch
	q.Set(pointers(in))
	require.Equal(t, 4, q.Len())
	require.Panics(t, func() { DotQ8_0Batch(make([]float32, 4*3), 3, &q, make([]byte, 3*68-1), 3) })
	require.Panics(t, func() { DotQ8_0Batch(make([]float32, 4*3-1), 3, &q, make([]byte, 3*68), 3) })
	require.Panics(t, func() { DotQ8_0Batch(make([]float32, 4*3), 2, &q, make([]byte, 3*68), 3) })
	require.NotPanics(t, func() { DotQ8_0Batch(make([]float32, 4*3), 3, &q, make([]byte, 3*68), 3) })
	in[2].Quantize(make([]float32, 32))
	require.Panics(t, func() { q.Set(pointers(in)) })
}

// BenchmarkDotQ8_0Batch multiplies a Q8_0 matrix by 64 quantized vectors, as a prefill
// does, 2048 × 2048 (a TinyLlama-shape attention projection) and 2048 × 5632 (its down
// projection, whose inputs no longer fit the L1 cache four at a time): "batched" is
// DotQ8_0Batch at every level this CPU has, "rows" one vector at a time through
// DotQ8_0Q8Rows (what a batch ran before DotQ8_0Batch).
func BenchmarkDotQ8_0Batch(b *testing.B) {
	for _, shape := range []struct{ rows, cols int }{{2048, 2048}, {2048, 5632}} {
		const batch = 64
		rows, cols := shape.rows, shape.cols
		rng := rand.New(rand.NewPCG(51, 51))
		rb := cols / QBlockLen * Q8_0BlockBytes
		w := make([]byte, rows*rb)
		fillRow(rng, q8Kind, halfNormal, w, rows*cols)
		in := make([]Q8Input, batch)
		for i := range in {
			in[i].Quantize(randomFloats(cols, uint64(60+i)))
		}
		var q Q8Batch
		q.Set(pointers(in))
		out := make([]float32, batch*rows)
		flops := 2.0 * float64(rows*cols*batch)
		name := fmt.Sprintf("%dx%d/", rows, cols)
		for _, level := range testLevels() {
			b.Run(name+"batched/"+level, func(b *testing.B) {
				defer atLevel(level)()
				cpuLoop(b, flops, func() { DotQ8_0Batch(out, rows, &q, w, rows) })
			})
			b.Run(name+"rows/"+level, func(b *testing.B) {
				defer atLevel(level)()
				cpuLoop(b, flops, func() {
					for i := range batch {
						DotQ8_0Q8Rows(out[i*rows:(i+1)*rows], q.Input(i), w)
					}
				})
			})
		}
	}
}

// pointers returns pointers to the elements of in, as Q8Batch.Set takes them.
func pointers(in []Q8Input) []*Q8Input {
	ps := make([]*Q8Input, len(in))
	for i := range in {
		ps[i] = &in[i]
	}
	return ps
}
