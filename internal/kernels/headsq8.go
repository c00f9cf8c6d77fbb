package kernels

import (
	"fmt"

	"github.com/kvref/kvref/internal/half"
)

// A q8_0 cache's keys and values read where they lie. Each head of a slot is dim/32 ggml
// Q8_0 blocks (an fp16 scale d, then 32 int8 values q); its values are float32(q)·d, one
// rounded multiply, exactly what DecodeQ8_0Strided writes. These kernels widen a block in
// registers and use it at once, where attention otherwise decoded a block's rows into a
// buffer and then read the buffer: the same values, the same arithmetic after them, so the
// same bits as Dot and Axpy of the decoded heads.

// DotQ8_0HeadsStrided is DotF16HeadsStrided for rows of Q8_0 blocks: row r's head h is the
// dim/32 blocks at w[r·stride + 34·(dim/32)·h:], and out[h·outStride + r] = Dot(q_h,
// the head decoded as DecodeQ8_0Strided decodes it), q_h = q[h·qStride : h·qStride+dim].
// next is DotF16HeadsStrided's hint. It panics if dim is not a positive multiple of 32,
// a stride is shorter than what it steps over or a slice ends before its last head or row.
func DotQ8_0HeadsStrided(out []float32, outStride int, q []float32, qStride, heads, dim int, w []byte, rows, stride int, next []byte) {
	hb := q8HeadBytes("DotQ8_0HeadsStrided", dim)
	if !checkHeadsStrided("DotQ8_0HeadsStrided", "bytes", heads, dim, rows, outStride, len(out), qStride, len(q), hb, stride, len(w)) {
		return
	}
	span := (rows-1)*stride + hb
	for h := range heads {
		dotQ8_0RowsStridedNext(out[h*outStride:h*outStride+rows], q[h*qStride:h*qStride+dim], w[h*hb:h*hb+span], stride, headsFrom(next, h*hb))
	}
}

// AxpyQ8_0HeadsStrided is AxpyF16HeadsStrided for rows of Q8_0 blocks (row r's head h at
// w[r·stride + 34·(dim/32)·h:]): for every head h it adds a[h·aStride + r] times row r's
// decoded head h to dst[h·dstStride : h·dstStride+dim], r = 0, 1, ... in that order, Axpy's
// bits. next is DotF16HeadsStrided's hint. It panics as DotQ8_0HeadsStrided does.
func AxpyQ8_0HeadsStrided(dst []float32, dstStride int, a []float32, aStride, heads, dim int, x []byte, rows, stride int, next []byte) {
	hb := q8HeadBytes("AxpyQ8_0HeadsStrided", dim)
	if !checkHeadsStrided("AxpyQ8_0HeadsStrided", "bytes", heads, dim, rows, aStride, len(a), dstStride, len(dst), hb, stride, len(x)) {
		return
	}
	span := (rows-1)*stride + hb
	for h := range heads {
		axpyQ8_0RowsNext(dst[h*dstStride:h*dstStride+dim], a[h*aStride:h*aStride+rows], x[h*hb:h*hb+span], stride, headsFrom(next, h*hb))
	}
}

// q8HeadBytes is the bytes of a head of dim values in Q8_0 blocks; it panics unless dim is
// a positive multiple of 32.
func q8HeadBytes(what string, dim int) int {
	if dim < QBlockLen || dim%QBlockLen != 0 {
		panic(fmt.Sprintf("kernels: %s: a head of %d values is not whole Q8_0 blocks of %d", what, dim, QBlockLen))
	}
	return dim / QBlockLen * Q8_0BlockBytes
}

// dotQ8_0Generic is the portable definition of one row of DotQ8_0HeadsStrided: dotGeneric
// of x and the row's blocks decoded, len(x) a multiple of 32 (so no tail).
func dotQ8_0Generic(x []float32, row []byte) float32 {
	var l lanes8
	var v [8]float32
	for k := range len(x) / QBlockLen {
		blk := row[k*Q8_0BlockBytes : (k+1)*Q8_0BlockBytes]
		d := half.F16Table[le16(blk)]
		for g := range 4 {
			for j := range v {
				v[j] = float32(int8(blk[2+8*g+j])) * d
			}
			l.add8(x[k*QBlockLen+8*g:], &v)
		}
	}
	return l.sum()
}

// dotQ8_0RowsStridedGeneric is the portable definition of DotQ8_0HeadsStrided for one
// head: out[r] = dotQ8_0Generic(x, row r), the rows stride bytes apart.
func dotQ8_0RowsStridedGeneric(out, x []float32, w []byte, stride int) {
	rb := len(x) / QBlockLen * Q8_0BlockBytes
	for r := range out {
		out[r] = dotQ8_0Generic(x, w[r*stride:r*stride+rb])
	}
}

// axpyQ8_0RowsGeneric is the portable definition of AxpyQ8_0HeadsStrided for one head: for
// each row t in order, dst[i] += float32(a[t]·v_t[i]) for i in increasing order, v_t the
// row's blocks decoded.
func axpyQ8_0RowsGeneric(dst, a []float32, x []byte, stride int) {
	nb := len(dst) / QBlockLen
	for t, at := range a {
		row := x[t*stride : t*stride+nb*Q8_0BlockBytes]
		for k := range nb {
			blk := row[k*Q8_0BlockBytes : (k+1)*Q8_0BlockBytes]
			d := half.F16Table[le16(blk)]
			out := dst[k*QBlockLen : (k+1)*QBlockLen]
			for j := range out {
				out[j] += float32(at * float32(float32(int8(blk[2+j]))*d))
			}
		}
	}
}
