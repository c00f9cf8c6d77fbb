package quant

import (
	"sync"

	"github.com/kvref/kvref/internal/kernels"
)

// Attention reads one head of a stored row at a time (DotHead, AxpyHead). Apart from a
// few fused paths, a head is decoded into a buffer (headBufs) with the same functions
// Decode uses and handed to kernels.Dot or kernels.Axpy, so the result is Decode followed
// by kernels.Dot or kernels.Axpy by construction, on the kernels' SIMD paths. The fused
// paths give the same bits: f32 reads the bytes in place, f16 and bf16 use the kernels'
// row dots, and the one-byte types (fp8-e5m2, int8, fp8-e4m3) accumulate table lookups
// in kernels.Dot's eight-lane order, which is faster than a decoded copy for them.

// headStack is the longest head decoded into a pooled buffer; a longer one gets a buffer
// of its own.
const headStack = 256

// headBufs recycles the buffers heads are decoded into. A buffer on the stack would move
// to the heap anyway: the decoders are called through cacheFormats, and escape analysis
// cannot see what an indirect call does with its arguments. DotHeads and AxpyHeads take
// one buffer per call, for all their rows.
var headBufs = sync.Pool{New: func() any { return new([headStack]float32) }}

// readHead decodes head number head of the encoded row (a shape checkHead accepted) into
// buf when it fits, a new slice otherwise, and returns the headDim values: exactly the
// values Decode writes for that head.
func (t CacheType) readHead(buf *[headStack]float32, row []byte, head, headDim int) []float32 {
	var v []float32
	if headDim <= headStack {
		v = buf[:headDim]
	} else {
		v = make([]float32, headDim)
	}
	t.decodeHead(v, row, head)
	return v
}

// decodeHead decodes head number head of the encoded row into v (headDim = len(v) values):
// exactly the values Decode writes for that head.
func (t CacheType) decodeHead(v []float32, row []byte, head int) {
	headDim := len(v)
	f := t.format()
	if f.blockBytes != 0 {
		f.decodeRange(v, row, head*headDim)
		return
	}
	f.decodeHead(v, row[head*f.headBytes(headDim):])
}

// dotHead is DotHead for a shape checkHead accepted; buf is for readHead, and may be nil
// when the type has a fused dotHead.
func (t CacheType) dotHead(q []float32, row []byte, head, headDim int, buf *[headStack]float32) float32 {
	if f := t.format(); f.dotHead != nil {
		return f.dotHead(q, row[head*f.headBytes(headDim):])
	}
	return kernels.Dot(q, t.readHead(buf, row, head, headDim))
}

// axpyHead is AxpyHead for a shape checkHead accepted; buf is for readHead, and may be
// nil when the type has a fused axpyHead.
func (t CacheType) axpyHead(dst []float32, a float32, row []byte, head, headDim int, buf *[headStack]float32) {
	if f := t.format(); f.axpyHead != nil {
		f.axpyHead(dst, a, row[head*f.headBytes(headDim):])
		return
	}
	kernels.Axpy(dst, a, t.readHead(buf, row, head, headDim))
}

// headBuf returns a buffer for readHead from headBufs, or nil when the type reads its
// heads fused (no decoded copy). Give it back with putHeadBuf.
func headBuf(fused bool) *[headStack]float32 {
	if fused {
		return nil
	}
	return headBufs.Get().(*[headStack]float32)
}

// putHeadBuf returns a buffer of headBuf to headBufs.
func putHeadBuf(buf *[headStack]float32) {
	if buf != nil {
		headBufs.Put(buf)
	}
}

// The fused reads of cacheFormats.

// dotF32Head: on a little-endian machine the bytes are the values.
func dotF32Head(q []float32, head []byte) float32 { return kernels.Dot(q, f32Values(head, len(q))) }

// axpyF32Head: on a little-endian machine the bytes are the values.
func axpyF32Head(dst []float32, a float32, head []byte) {
	kernels.Axpy(dst, a, f32Values(head, len(dst)))
}

// dotF32Heads multiplies the head of every row in one strided kernel.
func dotF32Heads(scores, q []float32, rows []byte, head, kvHeads, headDim, _ int) bool {
	v, stride, ok := f32Heads(rows, len(scores), head, kvHeads, headDim)
	if ok {
		kernels.DotRowsStrided(scores, q, v, stride)
	}
	return ok
}

// axpyF32Heads adds every row's head in one strided kernel, which keeps dst in registers.
func axpyF32Heads(dst, a []float32, rows []byte, head, kvHeads, headDim int) bool {
	v, stride, ok := f32Heads(rows, len(a), head, kvHeads, headDim)
	if ok {
		kernels.AxpyRowsStrided(dst, a, v, stride)
	}
	return ok
}

// dotF16Heads is the fused f16 row dot that weights use too, strided over the rows.
func dotF16Heads(scores, q []float32, rows []byte, head, _, headDim, rowBytes int) bool {
	kernels.DotF16RowsStrided(scores, q, rows[2*head*headDim:], rowBytes)
	return true
}

// axpyF16Heads adds every row's head in one strided kernel that widens the halves where they
// lie and keeps dst in registers.
func axpyF16Heads(dst, a []float32, rows []byte, head, kvHeads, headDim int) bool {
	kernels.AxpyF16RowsStrided(dst, a, rows[2*head*headDim:], 2*kvHeads*headDim)
	return true
}

// decodeF32Heads copies the head of every row, viewed in place.
func decodeF32Heads(dst []float32, rows []byte, head, kvHeads, headDim, _ int, _ []byte) bool {
	n := len(dst) / headDim
	v, stride, ok := f32Heads(rows, n, head, kvHeads, headDim)
	if !ok || n == 0 {
		return false
	}
	for i := range n {
		copy(dst[i*headDim:(i+1)*headDim], v[i*stride:i*stride+headDim])
	}
	return true
}

// decodeF16Heads widens the head of every row in one strided kernel, and asks for next's.
func decodeF16Heads(dst []float32, rows []byte, head, _, headDim, rowBytes int, next []byte) bool {
	kernels.DecodeF16Strided(dst, rows[2*head*headDim:], headDim, rowBytes, headsOf(next, 2*head*headDim))
	return true
}

// decodeQ8_0Heads decodes the head of every row in one strided kernel, when the head is
// whole blocks, and asks for next's.
func decodeQ8_0Heads(dst []float32, rows []byte, head, _, headDim, rowBytes int, next []byte) bool {
	hb, ok := q8HeadBytes(headDim)
	if ok {
		kernels.DecodeQ8_0Strided(dst, rows[head*hb:], headDim/q8BlockLen, rowBytes, headsOf(next, head*hb))
	}
	return ok
}

// dotQ8_0Heads is dotQ8_0HeadRange for the one head.
func dotQ8_0Heads(scores, q []float32, rows []byte, head, kvHeads, headDim, rowBytes int) bool {
	return dotQ8_0HeadRange(scores, len(scores), q, headDim, rows, len(scores), head, head+1, kvHeads, headDim, rowBytes, nil)
}

// axpyQ8_0Heads is axpyQ8_0HeadRange for the one head. A row is its kvHeads heads, so it
// is kvHeads·hb bytes when a head is whole blocks (when it is not, axpyQ8_0HeadRange
// reports false before using it).
func axpyQ8_0Heads(dst, a []float32, rows []byte, head, kvHeads, headDim int) bool {
	hb, _ := q8HeadBytes(headDim)
	return axpyQ8_0HeadRange(dst, headDim, a, len(a), rows, len(a), head, head+1, kvHeads, headDim, kvHeads*hb, nil)
}

// q8HeadBytes is the bytes of a head of headDim values of a q8_0 row, and whether the head
// is whole blocks (the strided kernels need it to be).
func q8HeadBytes(headDim int) (int, bool) {
	return headDim / q8BlockLen * q8BlockBytes, headDim%q8BlockLen == 0
}
