package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The benchmarks run every kernel twice: "generic" is the portable Go called directly,
// "fast" the exported function, which dispatches to the assembly when the build and CPU
// have it (with -tags purego it is the portable Go again, so that benchstat can compare
// the two builds name by name). On CPUs with AVX-512, BenchmarkMatMulRows also runs "avx",
// the AVX kernels without the AVX-512 block. Throughput is bytes of input read per second.

var sinkFloat float32

func randomFloats(n int, seed uint64) []float32 {
	v := make([]float32, n)
	fill(rand.New(rand.NewPCG(seed, seed)), kindNormal, v)
	return v
}

func BenchmarkDot(b *testing.B) {
	for _, n := range []int{64, 4096} {
		x, y := randomFloats(n, 1), randomFloats(n, 2)
		for _, impl := range []struct {
			name string
			dot  func(x, y []float32) float32
		}{{"generic", dotGeneric}, {"fast", Dot}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, impl.name), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				var s float32
				for b.Loop() {
					s += impl.dot(x, y)
				}
				sinkFloat = s
			})
		}
	}
}

// BenchmarkMatMulRows multiplies a rows × cols matrix by batch vectors. 2048×2048 f32 is
// 16 MiB of weights; 4096×4096 (64 MiB) is larger than any last-level cache of this
// class of machine, so batch 1 is bound by memory bandwidth there. Batch 16 reads the
// weights once for 16 vectors and is bound by arithmetic; the batch-512 cases are the
// projections of a 512-token prefill on the stories110M shape, where the inputs no longer
// fit in the core's caches.
func BenchmarkMatMulRows(b *testing.B) {

	for _, c := range []struct{ rows, cols, batch int }{
		{2048, 2048, 1}, {2048, 2048, 16}, {4096, 4096, 1},
		{768, 768, 512}, {2048, 768, 512}, {768, 2048, 512}, // the stories110M prefill's matrices
		{512, 64, 64},     // attention scores: 64 queries of one head against 512 keys
		{2048, 5632, 128}, // a TinyLlama down projection, a quarter of a 512-token prefill
	} {
		w := randomFloats(c.rows*c.cols, 3)
		x := randomFloats(c.batch*c.cols, 4)
		out := make([]float32, c.batch*c.rows)
		impls := []struct {
			name string
			mm   func(out, w, x []float32, rows, cols, batch, start, end int)
		}{{"generic", matMulRowsGeneric}, {"fast", MatMulRows}}
		if c.batch >= 4 {
			for name, mm := range extraMatMulRowsBenchmarks() {
				impls = append(impls, struct {
					name string
					mm   func(out, w, x []float32, rows, cols, batch, start, end int)
				}{name, mm})
			}
		}
		for _, impl := range impls {
			b.Run(fmt.Sprintf("%dx%d/batch=%d/%s", c.rows, c.cols, c.batch, impl.name), func(b *testing.B) {
				b.SetBytes(int64(4 * (c.rows*c.cols + c.batch*c.cols)))
				flops := 2 * float64(c.rows) * float64(c.cols) * float64(c.batch)
				cpuLoop(b, flops, func() { impl.mm(out, w, x, c.rows, c.cols, c.batch, 0, c.rows) })
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkAxpy(b *testing.B) {
	for _, n := range []int{64, 4096} {
		x, dst := randomFloats(n, 5), randomFloats(n, 6)
		for _, impl := range []struct {
			name string
			axpy func(dst []float32, a float32, x []float32)
		}{{"generic", axpyGeneric}, {"fast", Axpy}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, impl.name), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					impl.axpy(dst, 1e-7, x)
				}
			})
		}
	}
}
