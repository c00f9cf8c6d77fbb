package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDotLegacyBatchMatchesRows: DotQ4_0Batch and DotQ5_0Batch give every vector's
// portable legacy row dots bit for bit (NaN bits aside), at every level: batches under
// legacyBatchMin (the row dots) and at or past it (the rows rewritten as Q8_0, with the Q8_0
// kernels' groups of four and leftovers), row counts within one panel and across several
// (batchPanelBytes), every code (random bytes, and the extremes 0x00, 0x0f, 0xf0,
// 0xff, 0x80 and 0x7f in qs and qh), extreme scales, inputs of every kind; outputs beside
// the ones written stay untouched.
func TestDotLegacyBatchMatchesRows(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implQ8GemmVNNI)
		use(implQ8GemmAVX2)
		use(implLegacyGemmVNNI)
		rng := rand.New(rand.NewPCG(63, 0))
		for _, c := range []struct {
			f     *legacyFormat
			batch func(out []float32, stride int, x *Q8Batch, w []byte, rows int)
		}{{&lQ4_0, DotQ4_0Batch}, {&lQ5_0, DotQ5_0Batch}} {
			for _, s := range []struct{ nb, rows, count int }{
				{1, 5, 1}, {3, 7, 4}, {2, 9, 6}, {2, 6, 8}, {7, 4, 9}, {96, 170, 5}, {96, 170, 10}, {64, 3, 13},
				{129, 7, 12}, {1, 4, 8}, // chunks of the VNNI kernels with the odd block in the last; one block
				{5, 6, 18}, // past legacyDirectMaxBatch: rewritten with VNNI too

			} {
				n := s.nb * QBlockLen
				kind := []halfKind{halfNormal, halfExtreme, halfSub, halfBits}[rng.IntN(4)]
				xk := []dataKind{kindNormal, kindWide, kindMixed, kindSubnormal}[rng.IntN(4)]
				in := make([]Q8Input, s.count)
				for v := range in {
					x := make([]float32, n)
					fill(rng, xk, x)
					in[v].Quantize(x)
				}
				var q Q8Batch
				q.Set(pointers(in))
				rb := s.nb * c.f.blockBytes
				w := byteBuf(s.rows*rb, rng.IntN(3))
				fillKRow(rng, c.f.blockBytes, []int{0}, kind, w, s.rows*s.nb)
				stride := s.rows + 2
				out := make([]float32, s.count*stride)
				for i := range out {
					out[i] = 42
				}
				c.batch(out, stride, &q, w, s.rows)
				what := fmt.Sprintf("%s nb=%d rows=%d vectors=%d scales=%s x=%s", c.f.name, s.nb, s.rows, s.count, kind, xk)
				for v := range in {
					want := make([]float32, s.rows)
					legacyRowsGeneric(c.f, want, &in[v], w, rb)
					requireSameResults(t, want, out[v*stride:v*stride+s.rows], false, fmt.Sprintf("%s vector %d", what, v))
					for i := s.rows; i < stride && v*stride+i < len(out); i++ {
						require.Equal(t, float32(42), out[v*stride+i], "%s vector %d: output %d written", what, v, i)
					}
				}
			}
		}
	})
}

// TestLegacyAsQ8_0: every Q4_0 and Q5_0 code (each nibble value in every position, each
// fifth bit, random bytes) becomes its value less the offset as an int8 Q8_0 code, with the
// scale kept, at every level: the fast rewrite writes the portable twin's bytes, and
// nothing past the blocks of src.
func TestLegacyAsQ8_0(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implLegacyRewriteAVX2)
		for _, c := range []struct {
			f          *legacyFormat
			asQ8, twin func(dst, src []byte)
		}{{&lQ4_0, q4_0AsQ8_0, q4_0AsQ8_0Generic}, {&lQ5_0, q5_0AsQ8_0, q5_0AsQ8_0Generic}} {
			rng := rand.New(rand.NewPCG(64, 0))
			for _, blocks := range []int{64, 1, 3} {
				src := make([]byte, blocks*c.f.blockBytes)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				for b := range min(16, blocks) { // every nibble value, in every position
					for j := 2; j < c.f.blockBytes; j++ {
						src[b*c.f.blockBytes+j] = byte(b * 0x11)
					}
				}
				dst := make([]byte, (blocks+1)*Q8_0BlockBytes)
				for i := range dst {
					dst[i] = 0xa5
				}
				c.asQ8(dst, src)
				var k legacyBlock
				for b := range blocks {
					c.f.decode(&k, src[b*c.f.blockBytes:])
					d := dst[b*Q8_0BlockBytes:]
					require.Equal(t, src[b*c.f.blockBytes:b*c.f.blockBytes+2], d[:2], "%s block %d scale", c.f.name, b)
					for j := range QBlockLen {
						require.Equal(t, k.q[j], int32(int8(d[2+j])), "%s block %d value %d", c.f.name, b, j)
					}
				}
				for i, v := range dst[blocks*Q8_0BlockBytes:] {
					require.Equal(t, byte(0xa5), v, "%s: byte %d past the blocks written", c.f.name, i)
				}
				twin := make([]byte, blocks*Q8_0BlockBytes)
				c.twin(twin, src)
				require.Equal(t, twin, dst[:blocks*Q8_0BlockBytes], "%s, %d blocks: the portable twin's bytes", c.f.name, blocks)
			}
		}
	})
}

// TestDotLegacyBatchPanics: short rows or outputs panic.
func TestDotLegacyBatchPanics(t *testing.T) {
	var a Q8Input
	a.Quantize(make([]float32, QBlockLen))
	var q Q8Batch
	q.Set([]*Q8Input{&a, &a})
	require.Panics(t, func() { DotQ4_0Batch(make([]float32, 8), 4, &q, make([]byte, 4*Q4_0BlockBytes-1), 4) })
	require.Panics(t, func() { DotQ5_0Batch(make([]float32, 7), 4, &q, make([]byte, 4*Q5_0BlockBytes), 4) })
	require.NotPanics(t, func() { DotQ5_0Batch(make([]float32, 8), 4, &q, make([]byte, 4*Q5_0BlockBytes), 4) })
}

// BenchmarkDotQ4_0Batch multiplies Q4_0 rows by a batch of quantized vectors (a decode
// step of 4 or 16 sequences, a prefill's 64 or 512), 2048 × 2048 and 2048 × 5632 (a
// TinyLlama-shape projection and its down projection): "direct" is DotQ4_0Batch at the
// levels with batched kernels this CPU has (at avx512 the rows multiplied where they lie
// up to legacyDirectMaxBatch, 16, rewritten above; at avx2 rewritten as Q8_0 from batch 8,
// row dots below), "rewritten" the rows rewritten as Q8_0 (q4_0AsQ8_0) and multiplied by
// DotQ8_0Batch, the path the direct kernel replaces; the CPU time of the benchmark's
// thread per flop.
func BenchmarkDotQ4_0Batch(b *testing.B) {
	for _, shape := range []struct{ rows, cols int }{{2048, 2048}, {2048, 5632}} {
		for _, batch := range []int{4, 16, 64, 512} {
			rows, cols := shape.rows, shape.cols
			rng := rand.New(rand.NewPCG(65, 0))
			nb := cols / QBlockLen
			w := make([]byte, rows*nb*Q4_0BlockBytes)
			fillKRow(rng, Q4_0BlockBytes, []int{0}, halfNormal, w, rows*nb)
			in := make([]Q8Input, batch)
			for i := range in {
				in[i].Quantize(randomFloats(cols, uint64(70+i)))
			}
			var q Q8Batch
			q.Set(pointers(in))
			out := make([]float32, batch*rows)
			q8 := make([]byte, rows*nb*Q8_0BlockBytes)
			flops := 2.0 * float64(rows*cols*batch)
			name := fmt.Sprintf("%dx%d/batch=%d/", rows, cols, batch)
			for _, level := range testLevels() {
				if level != "avx512" && level != "avx2" { // no batched kernel: the row dots
					continue
				}
				b.Run(name+"direct/"+level, func(b *testing.B) {
					defer atLevel(level)()
					cpuLoop(b, flops, func() { DotQ4_0Batch(out, rows, &q, w, rows) })
				})
				b.Run(name+"rewritten/"+level, func(b *testing.B) {
					defer atLevel(level)()
					cpuLoop(b, flops, func() {
						q4_0AsQ8_0(q8, w)
						DotQ8_0Batch(out, rows, &q, q8, rows)
					})
				})
			}
		}
	}
}

// BenchmarkLegacyAsQ8_0 rewrites 2048 × 2048 Q4_0 and Q5_0 rows (a TinyLlama-shape
// projection, 2.4 and 2.9 MB) as Q8_0, at every level this CPU has, reporting values a
// nanosecond.
func BenchmarkLegacyAsQ8_0(b *testing.B) {
	const values = 2048 * 2048
	for _, c := range []struct {
		f    *legacyFormat
		asQ8 func(dst, src []byte)
	}{{&lQ4_0, q4_0AsQ8_0}, {&lQ5_0, q5_0AsQ8_0}} {
		src := make([]byte, values/QBlockLen*c.f.blockBytes)
		rng := rand.New(rand.NewPCG(66, 0))
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		dst := make([]byte, values/QBlockLen*Q8_0BlockBytes)
		for _, level := range testLevels() {
			b.Run(c.f.name+"/"+level, func(b *testing.B) {
				defer atLevel(level)()
				for b.Loop() {
					c.asQ8(dst, src)
				}
				b.ReportMetric(values*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "values/ns")
			})
		}
	}
}
