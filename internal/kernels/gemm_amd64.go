//go:build amd64 && !purego

package kernels

import (
	"sync"
	"unsafe"
)

// gemm4x8AVX512 runs tiles groups of four rows (n floats each, one group after the other
// from w) against eight input vectors packed by packPairs8AVX512 into xp, over n columns
// (a positive multiple of 8), writing row k of input j to out[j·outStride+k].
// Implemented in gemm_avx512_amd64.s.
//
//go:noescape
func gemm4x8AVX512(out *float32, outStride int, w, xp *float32, n, tiles int)

// gemm2x6AVX is gemm4x8AVX512 for pairs of rows against six input vectors (x + j·n
// floats, not packed), in twelve YMM accumulators. Implemented in gemm_amd64.s.
//
//go:noescape
func gemm2x6AVX(out *float32, outStride int, w, x *float32, n, tiles int)

// gemmRows is how many rows gemmAVX takes at a time: a block of rows (at most 32 × cols
// floats, 96 KiB for 768 columns, decoded once when the rows are stored in another form)
// stays in the core's L2 cache while every group of inputs meets it.
const gemmRows = DecodedPanelRows

// gemmShape is one micro-kernel's block of rows by inputs.
type gemmShape struct{ rows, inputs int }

var (
	gemmWide   = gemmShape{4, 8} // gemm4x8AVX512
	gemmNarrow = gemmShape{2, 6} // gemm2x6AVX
)

// gemmScratch is gemmAVX's packed inputs and decoded rows, recycled through gemmBuffers:
// a fresh buffer per product would cost page faults and zeroing every time.
type gemmScratch struct{ packed, panel []float32 }

var gemmBuffers = sync.Pool{New: func() any { return new(gemmScratch) }}

// gemmAVX is matMulRowsGeneric for rows [start, end) of a matrix whose cols is a positive
// multiple of 8, for a batch of input vectors: the rows come from w (row-major, rows ×
// cols) or, when decode is set, from decode(dst, r), once per row per call. The rows go in
// blocks of gemmRows; each block meets every full group of inputs in the micro-kernel
// (gemm4x8AVX512 with wide, the inputs packed once per call, else gemm2x6AVX), then the
// inputs left over in the four-row kernels, four (wide), two and one at a time; the rows
// left over at the end (fewer than four) go one dotAVXAsm at a time. Every output keeps
// Dot's lanes and order, so the blocking changes no bit. The caller has checked the
// arguments.
func gemmAVX(out, w, x []float32, rows, cols, batch, start, end int, decode func(dst []float32, r int), wide bool) {
	shape := gemmNarrow
	if wide {
		shape = gemmWide
	}
	s := gemmBuffers.Get().(*gemmScratch)
	defer gemmBuffers.Put(s)

	full := batch / shape.inputs * shape.inputs // inputs [0, full) go through the micro-kernel
	if wide && full > 0 {
		s.packed = growAligned(s.packed, full*cols)
		for b := 0; b < full; b += 8 {
			packPairs8AVX512(&s.packed[b*cols], &x[b*cols], cols)
		}
	}
	if decode != nil {
		s.panel = grow(s.panel, gemmRows*cols)
	}
	quadEnd := start + (end-start)&^3 // rows [start, quadEnd) go in blocks
	for r0 := start; r0 < quadEnd; r0 += gemmRows {
		r1 := min(r0+gemmRows, quadEnd)
		var wb []float32 // the block's rows
		if decode == nil {
			wb = w[r0*cols : r1*cols]
		} else {
			wb = s.panel[:(r1-r0)*cols]
			for r := r0; r < r1; r++ {
				decode(wb[(r-r0)*cols:(r-r0+1)*cols], r)
			}
		}
		for b := 0; b < full; b += shape.inputs {
			if wide {
				gemm4x8AVX512(&out[b*rows+r0], rows, &wb[0], &s.packed[b*cols], cols, (r1-r0)/4)
			} else {
				gemm2x6AVX(&out[b*rows+r0], rows, &wb[0], &x[b*cols], cols, (r1-r0)/2)
			}
		}
		for r := r0; r < r1; r += 4 {
			rows4(out, &wb[(r-r0)*cols], x, rows, cols, r, full, batch, wide)
		}
	}
	for r := quadEnd; r < end; r++ {
		var wr []float32
		if decode == nil {
			wr = w[r*cols : (r+1)*cols]
		} else {
			wr = s.panel[:cols]
			decode(wr, r)
		}
		for b := range batch {
			out[b*rows+r] = dotAVXAsm(&x[b*cols], &wr[0], cols)
		}
	}
}

// growAligned returns s resized to n floats starting at a 64-byte boundary, reallocating
// only when its capacity is short.
func growAligned(s []float32, n int) []float32 {
	if cap(s) >= n && uintptr(unsafe.Pointer(unsafe.SliceData(s)))%64 == 0 {
		return s[:n]
	}
	return alignedFloats(n)
}

// alignedFloats returns n float32s starting at a 64-byte boundary.
func alignedFloats(n int) []float32 {
	buf := make([]float32, n+15)
	off := int(uintptr(unsafe.Pointer(&buf[0]))%64) / 4
	if off != 0 {
		off = 16 - off
	}
	return buf[off : off+n : off+n]
}
