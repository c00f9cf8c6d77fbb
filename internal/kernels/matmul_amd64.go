//go:build amd64 && !purego

package kernels

import (
	"sync"
	"unsafe"
)

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

// dot4x8PackedAVX512 is dot4x4AVX512 for eight input vectors x_0..x_7 (32 dot products in
// 16 ZMM accumulators), the block that prefill spends its time in, with the vectors packed
// by packPairs8AVX512 into xp (8·n floats, 64-byte aligned for speed). n must be a
// positive multiple of 8. Needs AVX-512F. Implemented in matmul_avx512_amd64.s.
//
//go:noescape
func dot4x8PackedAVX512(out *float32, outStride int, w, xp *float32, n int)

// packPairs8AVX512 packs the eight input vectors at x (n floats each, consecutive) for
// dot4x8PackedAVX512 into dst (8·n floats): block b of vectors 2p and 2p+1 side by side at
// dst[64b+16p:]. n must be a positive multiple of 8. Implemented in matmul_avx512_amd64.s.
//
//go:noescape
func packPairs8AVX512(dst, x *float32, n int)

// packBuffers recycles matMulRowsAVX's packing buffers: a fresh one per call would cost
// page faults and zeroing on every product.
var packBuffers = sync.Pool{New: func() any { return new([]float32) }}

// alignedFloats returns n float32s starting at a 64-byte boundary.
func alignedFloats(n int) []float32 {
	buf := make([]float32, n+15)
	off := int(uintptr(unsafe.Pointer(&buf[0]))%64) / 4
	if off != 0 {
		off = 16 - off
	}
	return buf[off : off+n : off+n]
}

// matMulRowsAVX is matMulRowsGeneric computed by the assembly kernels, blocked for the
// caches like any matrix–matrix product. The batch is taken in blocks of vectors and the
// rows in blocks of rows, each block about blockBytes, so that both stay in the core's L2
// cache; within them, each group of eight vectors (in L1) meets every group of four rows
// of the row block (dot4x8PackedAVX512, with AVX-512 when wide is true and cols is a multiple of
// 8), and the vectors left over go four, two and one at a time; the last (end-start) mod 4
// rows go one Dot at a time. Without the blocking, a 512-token prefill would stream every
// input vector from the last-level cache once per four rows. (Batch-1 products whose
// cols is a multiple of 8 go to matVecAVX instead.) The caller has checked the arguments with matMulRowsFastOK.
func matMulRowsAVX(out, w, x []float32, rows, cols, batch, start, end int, wide bool) {
	wide8 := wide && cols%8 == 0
	perBlock := max(8, blockBytes/(4*cols)) &^ 7 // vectors or rows per block
	quads := start + (end-start)&^3              // rows [start, quads) go four at a time
	var packed []float32                         // the block's groups of eight vectors, packed in pairs
	if wide8 && batch >= 8 && quads > start {
		buf := packBuffers.Get().(*[]float32)
		defer packBuffers.Put(buf)
		if need := min(perBlock, batch&^7) * cols; len(*buf) < need {
			*buf = alignedFloats(max(need, blockBytes/4))
		}
		packed = *buf
	}
	for b0 := 0; b0 < batch; b0 += perBlock {
		b1 := min(b0+perBlock, batch)
		groups := 0 // vectors [b0, b0+8·groups) go eight at a time
		if packed != nil {
			groups = (b1 - b0) / 8
			for g := range groups {
				packPairs8AVX512(&packed[g*8*cols], &x[(b0+8*g)*cols], cols)
			}
		}
		for r0 := start; r0 < quads; r0 += perBlock {
			r1 := min(r0+perBlock, quads)
			for g := range groups {
				b := b0 + 8*g
				for r := r0; r < r1; r += 4 {
					dot4x8PackedAVX512(&out[b*rows+r], rows, &w[r*cols], &packed[g*8*cols], cols)
				}
			}
			b := b0 + 8*groups
			for r := r0; r < r1; r += 4 {
				wr := &w[r*cols]
				b := b
				if wide {
					for ; b+4 <= b1; b += 4 {
						dot4x4AVX512(&out[b*rows+r], rows, wr, &x[b*cols], cols)
					}
				}
				for ; b+2 <= b1; b += 2 {
					dot4x2AVX(&out[b*rows+r], rows, wr, &x[b*cols], cols)
				}
				if b < b1 {
					dot4x1AVX(&out[b*rows+r], wr, &x[b*cols], cols)
				}
			}
		}
		for r := quads; r < end; r++ {
			wr := &w[r*cols]
			for b := b0; b < b1; b++ {
				out[b*rows+r] = dotAVXAsm(&x[b*cols], wr, cols)
			}
		}
	}
}

// matVecAVX is matMulRowsGeneric for one input vector (decode), cols a positive multiple
// of 8: nothing to reuse, so the weights are read as long sequential streams, the four
// quarters of the rows side by side (two streams reach 55 GB/s on this class of machine,
// four 65), or all of them in one. The caller has checked the arguments with
// matMulRowsFastOK.
func matVecAVX(out, w, x []float32, cols, start, end int) {
	n := end - start
	if quarter := n / 4; cols%16 == 0 && quarter > 0 {
		dotRows4AVX(&out[start], &w[start*cols], &x[0], quarter, cols, quarter)
		if r := start + 4*quarter; r < end {
			dotRowsAVX(&out[r], &w[r*cols], &x[0], end-r, cols)
		}
		return
	}
	dotRowsAVX(&out[start], &w[start*cols], &x[0], n, cols)
}

// blockBytes is the size of matMulRowsAVX's blocks of vectors and of rows: two of them
// fit comfortably in the 1 MiB L2 cache of current x86 server cores.
const blockBytes = 256 << 10

// dotRowsAVX sets out[r] = Dot(x, w_r) for the rows consecutive weight rows
// w_r = w[r*n:(r+1)*n], reading the weights as one sequential stream: the batch-1 (decode)
// product. rows must be at least 1 and n a positive multiple of 8. Implemented in
// matmul_amd64.s.
//
//go:noescape
func dotRowsAVX(out, w, x *float32, rows, n int)

// dotRows4AVX sets out[r] = Dot(x, w_r) for the rows k·quarter .. k·quarter+rows-1,
// k = 0..3 (rows ≥ 1, n a positive multiple of 16), reading the four runs of rows as four
// sequential streams. Implemented in matmul_amd64.s.
//
//go:noescape
func dotRows4AVX(out, w, x *float32, rows, n, quarter int)
