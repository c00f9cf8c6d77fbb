//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkMatVecWalk compares the two ways the batch-1 kernels walk a matrix's rows from
// memory, on one thread, alternating in one run: four adjacent rows at a time with the
// next four prefetched (dotRowsX4AVX, dotF16x4AVX2: the walk Zen 4 was tuned with) against
// four quarters of the rows side by side (dotRowsQ4AVX, dotF16Q4AVX2: the quarter walk). It
// reports each walk's rate of reading the weights (GB/s of the thread's CPU time) and
// quarters/adjacent. The matrices (stories110M's 768 columns and TinyLlama's 2,048, in
// float32 and f16) are read from 256 MiB of copies, so that each read comes from memory.
//
//	go test ./internal/kernels -run '^$' -bench MatVecWalk
func BenchmarkMatVecWalk(b *testing.B) {
	for _, c := range []struct {
		format     string
		rows, cols int
	}{{"f32", 768, 768}, {"f32", 2048, 2048}, {"f16", 768, 768}, {"f16", 2048, 2048}} {
		b.Run(fmt.Sprintf("%s/%dx%d", c.format, c.rows, c.cols), func(b *testing.B) {
			if !implMatVecAVX.on || !implF16AVX2.on {
				b.Skip("needs the AVX2 kernels")
			}
			elem := 4
			if c.format == "f16" {
				elem = 2
			}
			size := c.rows * c.cols * elem
			copies := max(2, (256<<20)/size)
			var w32 []float32
			var w16 []byte
			if c.format == "f32" {
				w32 = randomFloats(copies*c.rows*c.cols, 7)
			} else {
				w16 = make([]byte, copies*size)
				for i := 0; i < len(w16); i += 2 {
					w16[i], w16[i+1] = byte(i*7), byte(i*13)&0x3b // finite halves
				}
			}
			x := randomFloats(c.cols, 8)
			out := make([]float32, c.rows)
			q := c.rows / 4
			walk := func(quarters bool, k int) {
				switch {
				case c.format == "f32" && quarters:
					dotRowsQ4AVX(&out[0], &w32[k*c.rows*c.cols], &x[0], q, c.cols, c.cols)
				case c.format == "f32":
					dotRowsX4AVX(&out[0], &w32[k*c.rows*c.cols], &x[0], 4*q, c.cols, c.cols)
				case quarters:
					dotF16Q4AVX2(&out[0], &w16[k*size], &x[0], q, q, c.cols, 2*c.cols)
				default:
					for r := 0; r < 4*q; r += 4 {
						dotF16x4AVX2(&out[r], &w16[k*size+r*2*c.cols], &x[0], c.cols, 2*c.cols)
					}
				}
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var spent [2]time.Duration
			k := 0
			for b.Loop() {
				for i, quarters := range []bool{false, true} {
					start := threadCPU()
					walk(quarters, k)
					spent[i] += threadCPU() - start
					k = (k + 1) % copies
				}
			}
			adjacent := float64(size) * float64(b.N) / spent[0].Seconds() / 1e9
			quarters := float64(size) * float64(b.N) / spent[1].Seconds() / 1e9
			b.ReportMetric(adjacent, "adjacent-GB/s")
			b.ReportMetric(quarters, "quarters-GB/s")
			b.ReportMetric(quarters/adjacent, "quarters/adjacent")
		})
	}
}
