// Package probe measures the machine for kvref bench --roofline: the memory bandwidth
// (StreamRead) and the arithmetic peaks (PeakLoops, Int8PeakLoop), in register-only or
// streaming loops written for that alone. They are not numeric kernels: their results are
// rates, and StreamRead's sum is in no promised order. Each picks the widest vectors that
// package kernels may use now (kernels.Enabled), so that kvref bench --kernels avx2 on an
// AVX-512 machine measures the AVX2 ceiling.
package probe

// streamReadGeneric sums x with eight independent accumulators (StreamRead's portable
// path: fast enough to be limited by memory rather than by one chain of additions).
func streamReadGeneric(x []float32) float32 {
	var a0, a1, a2, a3, a4, a5, a6, a7 float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		a0 += v[0]
		a1 += v[1]
		a2 += v[2]
		a3 += v[3]
		a4 += v[4]
		a5 += v[5]
		a6 += v[6]
		a7 += v[7]
	}
	for ; i < len(x); i++ {
		a0 += x[i]
	}
	return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}
