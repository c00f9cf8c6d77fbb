package quant

import "fmt"

// DotHeads sets scores[i] = DotHead(q, row_i, head, kvHeads, headDim) for every i <
// len(scores), row_i the i-th of the consecutive encoded rows in rows (the slots of one
// cache block): the same bits, in one call. A type with a strided kernel (cacheFormat's
// dotHeads: f32, f16 and q8_0) multiplies the head of every row in one call; the other types
// take the rows one by one. It panics on a wrong length, head or shape, or when rows holds fewer than
// len(scores) rows.
func (t CacheType) DotHeads(scores, q []float32, rows []byte, head, kvHeads, headDim int) {
	rb := t.checkHeads("DotHeads", len(q), len(scores), len(rows), head, kvHeads, headDim)
	if len(scores) == 0 {
		return
	}
	if f := t.format(); f.dotHeads != nil && f.dotHeads(scores, q, rows, head, kvHeads, headDim, rb) {
		return
	}
	buf := headBuf(t.format().dotHead != nil)
	for i := range scores {
		scores[i] = t.dotHead(q, rows[i*rb:(i+1)*rb], head, headDim, buf)
	}
	putHeadBuf(buf)
}

// AxpyHeads adds a[i] times head number head of row_i to dst for i = 0, 1, ...,
// len(a)-1 in that order: AxpyHead once per row, the same bits, in one call (for a type
// with cacheFormat's axpyHeads, f32, f16 and q8_0, one strided kernel). It
// panics on a wrong length, head or shape, or when rows holds fewer than len(a) rows.
func (t CacheType) AxpyHeads(dst, a []float32, rows []byte, head, kvHeads, headDim int) {
	rb := t.checkHeads("AxpyHeads", len(dst), len(a), len(rows), head, kvHeads, headDim)
	if len(a) == 0 {
		return
	}
	if f := t.format(); f.axpyHeads != nil && f.axpyHeads(dst, a, rows, head, kvHeads, headDim) {
		return
	}
	buf := headBuf(t.format().axpyHead != nil)
	for i, ai := range a {
		t.axpyHead(dst, ai, rows[i*rb:(i+1)*rb], head, headDim, buf)
	}
	putHeadBuf(buf)
}

// f32Heads views head number head of n > 0 consecutive f32 rows as float32 values from the
// head's first value to the last row's end of the head, the rows stride = kvHeads·headDim
// values apart; ok is false when the bytes cannot be viewed so (asFloat32s).
func f32Heads(rows []byte, n, head, kvHeads, headDim int) (v []float32, stride int, ok bool) {
	stride = kvHeads * headDim
	v, ok = asFloat32s(rows[4*head*headDim:], (n-1)*stride+headDim)
	return v, stride, ok
}

// checkHeads is checkHead for n rows of rows (rowsLen bytes): it returns the row length.
func (t CacheType) checkHeads(what string, q, n, rowsLen, head, kvHeads, headDim int) int {
	rb := t.RowBytes(kvHeads, headDim)
	t.checkHead(what, q, rb, head, kvHeads, headDim)
	if n < 0 || rowsLen < n*rb {
		panic(fmt.Sprintf("quant: %v %s: %d bytes hold fewer than %d rows of %d bytes", t, what, rowsLen, n, rb))
	}
	return rb
}

// DecodeHeads decodes head number head of the first len(dst)/headDim consecutive encoded
// rows in rows (the slots of one cache block) into dst, row i's head at
// dst[i·headDim:(i+1)·headDim]: exactly the values Decode writes for that head of each
// row. Attention decodes a block's keys or values once this way and lets every query that
// reads them use the float32 kernels (kernels.Dot of a decoded head is DotHead's result,
// kernels.Axpy of it AxpyHead's). It panics on a wrong length, head or shape, or when rows
// holds fewer rows than dst asks for.
//
// next (nil for none) holds the rows the caller reads after these, laid out as rows (the
// next cache block's slots): a type whose strided kernel can (PrefetchesNext: f16, q8_0)
// asks the memory for the same head of them while it decodes. It is only a hint.
func (t CacheType) DecodeHeads(dst []float32, rows []byte, head, kvHeads, headDim int, next []byte) {
	if headDim < 1 || len(dst)%headDim != 0 {
		panic(fmt.Sprintf("quant: %v DecodeHeads: %d values are not a whole number of heads of %d", t, len(dst), headDim))
	}
	n := len(dst) / headDim
	rb := t.checkHeads("DecodeHeads", headDim, n, len(rows), head, kvHeads, headDim)
	if f := t.format(); f.decodeHeads != nil && f.decodeHeads(dst, rows, head, kvHeads, headDim, rb, next) {
		return
	}
	for i := range n {
		t.decodeHead(dst[i*headDim:(i+1)*headDim], rows[i*rb:(i+1)*rb], head)
	}
}

// F32Heads views head number head of n > 0 consecutive rows of an f32 cache in place: the
// float32 values from the first row's head to the last row's, the rows stride =
// kvHeads·headDim values apart (row i's head at v[i·stride:i·stride+headDim]), for the
// strided float32 kernels. ok is false for any other cache type, when the bytes cannot be
// viewed so (a big-endian machine, misaligned bytes) or when rows holds fewer than n rows
// or the shape is wrong; the caller then decodes (DecodeHeads).
func (t CacheType) F32Heads(rows []byte, n, head, kvHeads, headDim int) (v []float32, stride int, ok bool) {
	if t != F32 || n < 1 || head < 0 || head >= kvHeads || headDim < 1 || len(rows) < n*t.RowBytes(kvHeads, headDim) {
		return nil, 0, false
	}
	return f32Heads(rows, n, head, kvHeads, headDim)
}

// StridedDotHeads reports whether DotHeads multiplies every row's head in one strided
// kernel that reads the stored bytes in place (f32, f16, q8_0), so that a single query is
// scored faster by DotHeads than by decoding the rows (DecodeHeads) and multiplying the
// copy; the other types decode each row either way.
func (t CacheType) StridedDotHeads() bool {
	return t < numCacheTypes && cacheFormats[t].dotHeads != nil
}

// StridedAxpyHeads reports whether AxpyHeads adds every row's head in one strided kernel
// that reads the stored bytes in place (f32, f16, q8_0), so that a single query's weighted
// sum is faster through AxpyHeads than through decoding the rows (DecodeHeads) and adding
// the copy; the other types decode each row either way.
func (t CacheType) StridedAxpyHeads() bool {
	return t < numCacheTypes && cacheFormats[t].axpyHeads != nil
}
