package quant

import "github.com/kvref/kvref/internal/kernels"

// Attention reads one head of a stored row at a time (DotHead, AxpyHead). Apart from a
// few fused paths, a head is decoded into a buffer on the stack with the same functions
// Decode uses and handed to kernels.Dot or kernels.Axpy, so the result is Decode followed
// by kernels.Dot or kernels.Axpy by construction, on the kernels' SIMD paths. The fused
// paths give the same bits: f32 reads the bytes in place, f16 and bf16 use the kernels'
// row dots, and the one-byte types (fp8-e5m2, int8, fp8-e4m3) accumulate table lookups
// in kernels.Dot's eight-lane order, which is faster than a decoded copy for them.

// headStack is the longest head decoded into a stack buffer; a longer one gets a heap
// buffer.
const headStack = 256

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
	switch t {
	case F32:
		decodeF32(v, row[4*head*headDim:])
	case F16:
		decodeF16(v, row[2*head*headDim:])
	case BF16:
		decodeBF16(v, row[2*head*headDim:])
	case FP8E5M2:
		decodeE5M2(v, row[head*headDim:])
	case Int8, FP8E4M3:
		t.scaled().decodeHead(v, row[head*(scaleBytes+headDim):])
	case Q8_0:
		decodeQ8Range(v, row, head*headDim)
	default: // the 4- and 5-bit block types
		decodeBlockRange(t, v, row, head*headDim)
	}
}

// dotHead is DotHead for a shape checkHead accepted.
func (t CacheType) dotHead(q []float32, row []byte, head, headDim int) float32 {
	switch t {
	case F32: // on a little-endian machine the bytes are the values
		return kernels.Dot(q, f32Values(row[4*head*headDim:], headDim))
	case F16: // the fused row dot that weights use too
		return kernels.DotF16(q, row[2*head*headDim:])
	case BF16:
		return kernels.DotBF16(q, row[2*head*headDim:])
	case FP8E5M2: // one table lookup per value: fused beats a decoded copy
		return dotE5M2(q, row[head*headDim:])
	case Int8, FP8E4M3:
		return t.scaled().dot(q, row[head*(scaleBytes+headDim):])
	}
	var buf [headStack]float32
	return kernels.Dot(q, t.readHead(&buf, row, head, headDim))
}

// axpyHead is AxpyHead for a shape checkHead accepted.
func (t CacheType) axpyHead(dst []float32, a float32, row []byte, head, headDim int) {
	if t == F32 {
		kernels.Axpy(dst, a, f32Values(row[4*head*headDim:], headDim))
		return
	}
	var buf [headStack]float32
	kernels.Axpy(dst, a, t.readHead(&buf, row, head, headDim))
}
