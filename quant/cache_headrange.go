package quant

import (
	"fmt"

	"github.com/kvref/kvref/internal/kernels"
)

// DotHeadRange is DotHeads for the run of heads [h0, h1) of the same n rows: for every
// head h of the run and row i < n, scores[(h-h0)·scoreStride + i] = DotHead(q_h, row_i, h,
// kvHeads, headDim), q_h = q[(h-h0)·qStride : (h-h0)·qStride+headDim] — the same bits as
// one DotHeads per head. A decode row that meets a cache block alone scores all the heads
// it attends with one call per block. f32, f16 and q8_0 (heads of whole blocks) take every
// head in one strided kernel (kernels.DotHeadsStrided, kernels.DotF16HeadsStrided,
// kernels.DotQ8_0HeadsStrided); the other types go head by head.
// It panics on a wrong shape, a stride shorter than what it steps over, or slices that
// end before the last head or row.
//
// next (nil for none) holds the rows the caller reads after these, laid out as rows (the
// next cache block's slots): a type whose kernel can (PrefetchesNext: f16, q8_0) asks the memory
// for the same heads of them while it works. It is only a hint; the results do not depend
// on it.
func (t CacheType) DotHeadRange(scores []float32, scoreStride int, q []float32, qStride int, rows []byte, n, h0, h1, kvHeads, headDim int, next []byte) {
	rb := t.checkHeadRange("DotHeadRange", scoreStride, len(scores), qStride, len(q), len(rows), n, h0, h1, kvHeads, headDim)
	if n == 0 || h0 == h1 {
		return
	}
	if f := t.format(); f.dotHeadRange != nil && f.dotHeadRange(scores, scoreStride, q, qStride, rows, n, h0, h1, kvHeads, headDim, rb, next) {
		return
	}
	for h := h0; h < h1; h++ {
		j := h - h0
		t.DotHeads(scores[j*scoreStride:j*scoreStride+n], q[j*qStride:j*qStride+headDim], rows[:n*rb], h, kvHeads, headDim)
	}
}

// AxpyHeadRange is AxpyHeads for the run of heads [h0, h1) of the same n rows: for every
// head h of the run it adds a[(h-h0)·aStride + i] times head h of row_i to
// dst[(h-h0)·dstStride : (h-h0)·dstStride+headDim] for i = 0, 1, ..., n-1 in that order —
// the same bits as one AxpyHeads per head (f32, f16 and q8_0 in one strided kernel,
// kernels.AxpyHeadsStrided, kernels.AxpyF16HeadsStrided and kernels.AxpyQ8_0HeadsStrided). It panics as DotHeadRange
// does, and takes next as DotHeadRange does.
func (t CacheType) AxpyHeadRange(dst []float32, dstStride int, a []float32, aStride int, rows []byte, n, h0, h1, kvHeads, headDim int, next []byte) {
	rb := t.checkHeadRange("AxpyHeadRange", aStride, len(a), dstStride, len(dst), len(rows), n, h0, h1, kvHeads, headDim)
	if n == 0 || h0 == h1 {
		return
	}
	if f := t.format(); f.axpyHeadRange != nil && f.axpyHeadRange(dst, dstStride, a, aStride, rows, n, h0, h1, kvHeads, headDim, rb, next) {
		return
	}
	for h := h0; h < h1; h++ {
		j := h - h0
		t.AxpyHeads(dst[j*dstStride:j*dstStride+headDim], a[j*aStride:j*aStride+n], rows[:n*rb], h, kvHeads, headDim)
	}
}

// checkHeadRange checks a DotHeadRange or AxpyHeadRange call (what): the heads [h0, h1)
// of n rows of rowsLen bytes, per-row results rowStride apart in rowLen values (scores or
// weights, n per head) and per-head vectors vecStride apart in vecLen values (queries or
// outputs, headDim per head). It returns the row length and panics on anything wrong.
func (t CacheType) checkHeadRange(what string, rowStride, rowLen, vecStride, vecLen, rowsLen, n, h0, h1, kvHeads, headDim int) int {
	if h0 < 0 || h1 < h0 || h1 > kvHeads {
		panic(fmt.Sprintf("quant: %v %s: heads [%d, %d) are not a run of the %d KV heads", t, what, h0, h1, kvHeads))
	}
	rb := t.checkHeads(what, headDim, n, rowsLen, min(h0, kvHeads-1), kvHeads, headDim)
	heads := h1 - h0
	if heads == 0 || n == 0 {
		return rb
	}
	if rowStride < n || vecStride < headDim {
		panic(fmt.Sprintf("quant: %v %s: strides %d and %d are shorter than %d rows and a head of %d", t, what, rowStride, vecStride, n, headDim))
	}
	if (rowLen-n)/rowStride < heads-1 || rowLen < n || (vecLen-headDim)/vecStride < heads-1 || vecLen < headDim {
		panic(fmt.Sprintf("quant: %v %s: %d and %d values hold fewer than %d heads of %d rows (%d apart) and of %d values (%d apart)",
			t, what, rowLen, vecLen, heads, n, rowStride, headDim, vecStride))
	}
	return rb
}

// The range reads of cacheFormats: every head of the run in one strided kernel.

// dotF32HeadRange views the rows' heads in place (false when they cannot be viewed).
func dotF32HeadRange(scores []float32, scoreStride int, q []float32, qStride int, rows []byte, n, h0, h1, kvHeads, headDim, _ int, _ []byte) bool {
	v, stride, ok := f32HeadRange(rows, n, h0, h1, kvHeads, headDim)
	if ok {
		kernels.DotHeadsStrided(scores, scoreStride, q, qStride, h1-h0, headDim, v, n, stride)
	}
	return ok
}

// axpyF32HeadRange views the rows' heads in place (false when they cannot be viewed).
func axpyF32HeadRange(dst []float32, dstStride int, a []float32, aStride int, rows []byte, n, h0, h1, kvHeads, headDim, _ int, _ []byte) bool {
	v, stride, ok := f32HeadRange(rows, n, h0, h1, kvHeads, headDim)
	if ok {
		kernels.AxpyHeadsStrided(dst, dstStride, a, aStride, h1-h0, headDim, v, n, stride)
	}
	return ok
}

// f32HeadRange views the heads [h0, h1) of n > 0 consecutive f32 rows as float32 values
// from the first row's head h0 to the last row's head h1-1, the rows stride = kvHeads·headDim
// values apart.
func f32HeadRange(rows []byte, n, h0, h1, kvHeads, headDim int) (v []float32, stride int, ok bool) {
	stride = kvHeads * headDim
	v, ok = asFloat32s(rows[4*h0*headDim:], (n-1)*stride+(h1-h0)*headDim)
	return v, stride, ok
}

// dotF16HeadRange widens the halves where they lie, and prefetches next's.
func dotF16HeadRange(scores []float32, scoreStride int, q []float32, qStride int, rows []byte, n, h0, h1, _, headDim, rowBytes int, next []byte) bool {
	kernels.DotF16HeadsStrided(scores, scoreStride, q, qStride, h1-h0, headDim, rows[2*h0*headDim:], n, rowBytes, headsOf(next, 2*h0*headDim))
	return true
}

// headsOf is rows from byte off on, or nil when rows ends before it.
func headsOf(rows []byte, off int) []byte {
	if off >= len(rows) {
		return nil
	}
	return rows[off:]
}

// axpyF16HeadRange widens the halves where they lie and keeps each head's sum in registers,
// and prefetches next's.
func axpyF16HeadRange(dst []float32, dstStride int, a []float32, aStride int, rows []byte, n, h0, h1, _, headDim, rowBytes int, next []byte) bool {
	kernels.AxpyF16HeadsStrided(dst, dstStride, a, aStride, h1-h0, headDim, rows[2*h0*headDim:], n, rowBytes, headsOf(next, 2*h0*headDim))
	return true
}

// dotQ8_0HeadRange widens the blocks where they lie, and prefetches next's, when a head is
// whole blocks.
func dotQ8_0HeadRange(scores []float32, scoreStride int, q []float32, qStride int, rows []byte, n, h0, h1, _, headDim, rowBytes int, next []byte) bool {
	hb, ok := q8HeadBytes(headDim)
	if ok {
		kernels.DotQ8_0HeadsStrided(scores, scoreStride, q, qStride, h1-h0, headDim, rows[h0*hb:], n, rowBytes, headsOf(next, h0*hb))
	}
	return ok
}

// axpyQ8_0HeadRange widens the blocks where they lie and keeps each head's sum in
// registers, and prefetches next's, when a head is whole blocks.
func axpyQ8_0HeadRange(dst []float32, dstStride int, a []float32, aStride int, rows []byte, n, h0, h1, _, headDim, rowBytes int, next []byte) bool {
	hb, ok := q8HeadBytes(headDim)
	if ok {
		kernels.AxpyQ8_0HeadsStrided(dst, dstStride, a, aStride, h1-h0, headDim, rows[h0*hb:], n, rowBytes, headsOf(next, h0*hb))
	}
	return ok
}

// PrefetchesNext reports whether the reads attention makes of a cache block of this type
// ask the memory for the next rows they are given while they work — DotHeadRange and
// AxpyHeadRange where StridedDotHeads and StridedAxpyHeads, DecodeHeads otherwise (f16,
// q8_0) — so that a caller need not prefetch those rows itself.
func (t CacheType) PrefetchesNext() bool {
	return t < numCacheTypes && cacheFormats[t].prefetchesNext
}
