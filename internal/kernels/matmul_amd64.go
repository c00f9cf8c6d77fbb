//go:build amd64 && !purego

package kernels

// dot4x1AVX sets out[k] = Dot(x, w_k) for the four weight rows w_k = w[k*n:(k+1)*n],
// k = 0..3, each in its own YMM accumulator with Dot's exact lane order; the four
// independent chains keep the adders busy while the rows stream in. Implemented in
// matmul_amd64.s.
//
//go:noescape
func dot4x1AVX(out, w, x *float32, n int)

// dot4x2AVX sets out[j*outStride+k] = Dot(x_j, w_k) for the four weight rows
// w_k = w[k*n:(k+1)*n] and the two input vectors x_j = x[j*n:(j+1)*n]: a register block of
// 4 × 2 YMM accumulators, each weight block loaded once for both vectors, each output in
// Dot's exact lane order. Implemented in matmul_amd64.s.
//
//go:noescape
func dot4x2AVX(out *float32, outStride int, w, x *float32, n int)

// dot4x4AVX512 is dot4x2AVX for four input vectors x_0..x_3, in ZMM registers that each
// hold two eight-lane accumulators (the same row against two inputs), so that one VMULPS
// and one VADDPS do the work of two. Needs AVX-512F. Implemented in matmul_avx512_amd64.s.
//
//go:noescape
func dot4x4AVX512(out *float32, outStride int, w, x *float32, n int)

// matMulRowsAVX is matMulRowsGeneric computed by the assembly kernels: blocks of four
// weight rows against groups of four batch vectors (with AVX-512, when wide is true), then
// pairs, then a single one; the last (end-start) mod 4 rows one Dot at a time. Each block
// of rows is used for the whole batch while it is in cache, so the weights are streamed
// from memory once. The caller has checked the arguments with matMulRowsFastOK.
func matMulRowsAVX(out, w, x []float32, rows, cols, batch, start, end int, wide bool) {
	r := start
	for ; r+4 <= end; r += 4 {
		wr := &w[r*cols]
		b := 0
		if wide {
			for ; b+4 <= batch; b += 4 {
				dot4x4AVX512(&out[b*rows+r], rows, wr, &x[b*cols], cols)
			}
		}
		for ; b+2 <= batch; b += 2 {
			dot4x2AVX(&out[b*rows+r], rows, wr, &x[b*cols], cols)
		}
		if b < batch {
			dot4x1AVX(&out[b*rows+r], wr, &x[b*cols], cols)
		}
	}
	for ; r < end; r++ {
		wr := &w[r*cols]
		for b := 0; b < batch; b++ {
			out[b*rows+r] = dotAVXAsm(&x[b*cols], wr, cols)
		}
	}
}
