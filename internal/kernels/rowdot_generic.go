package kernels

import (
	"github.com/kvref/kvref/internal/half"
)

// le16 reads the little-endian uint16 at b[0:2].
func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

// lanes8 holds the eight lanes of a dot product.
type lanes8 [8]float32

// add8 adds float32(xs[j]*ws[j]) to lane j, the step of dotGeneric for one group of eight.
func (l *lanes8) add8(xs []float32, ws *[8]float32) {
	xs = xs[:8:8]
	l[0] += float32(xs[0] * ws[0])
	l[1] += float32(xs[1] * ws[1])
	l[2] += float32(xs[2] * ws[2])
	l[3] += float32(xs[3] * ws[3])
	l[4] += float32(xs[4] * ws[4])
	l[5] += float32(xs[5] * ws[5])
	l[6] += float32(xs[6] * ws[6])
	l[7] += float32(xs[7] * ws[7])
}

// sum combines the lanes with ReduceLanes.
func (l *lanes8) sum() float32 {
	return ReduceLanes(l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7])
}

// dotF16Generic is the portable definition of DotF16: Dot(x, v) for the row of halves in
// row (2·len(x) bytes), whole groups of eight, then the last len(x)%8 values and +0
// padding, as in dotGeneric (whose tail products are stored into a zeroed array, so lanes
// past the end receive +0; here the padding is 0·0 = +0).
func dotF16Generic(x []float32, row []byte) float32 { return dotHalfGeneric(x, row, false) }

// dotBF16Generic is the portable definition of DotBF16: dotF16Generic for bfloat16.
func dotBF16Generic(x []float32, row []byte) float32 { return dotHalfGeneric(x, row, true) }

// dotHalfGeneric is dotF16Generic, or with bf16 dotBF16Generic. The format is a flag tested
// once per group of eight, not a conversion function value, which would cost an indirect
// call per element.
func dotHalfGeneric(x []float32, row []byte, bf16 bool) float32 {
	n := len(x)
	row = row[:2*n]
	var l lanes8
	var w [8]float32
	i := 0
	for ; i+8 <= n; i += 8 {
		halvesToF32(w[:], row[2*i:2*i+16], bf16)
		l.add8(x[i:], &w)
	}
	if i < n {
		var xt [8]float32
		w = [8]float32{}
		copy(xt[:], x[i:])
		halvesToF32(w[:n-i], row[2*i:], bf16)
		l.add8(xt[:], &w)
	}
	return l.sum()
}

// halvesToF32 sets w[j] to the f16 (or, with bf16, bfloat16) value in bytes 2j and 2j+1 of b.
func halvesToF32(w []float32, b []byte, bf16 bool) {
	b = b[:2*len(w)]
	if bf16 {
		for j := range w {
			w[j] = half.BF16ToF32(le16(b[2*j:]))
		}
		return
	}
	table := half.F16Table
	for j := range w {
		w[j] = table[le16(b[2*j:])]
	}
}

// dotF16RowsStridedGeneric is the portable definition of DotF16RowsStrided.
func dotF16RowsStridedGeneric(out, x []float32, w []byte, stride int) {
	for r := range out {
		out[r] = dotF16Generic(x, w[r*stride:r*stride+2*len(x)])
	}
}

// rowsGeneric is the definition of the *Rows kernels: one row dot per output, in order.
func rowsGeneric(out, x []float32, w []byte, rb int, dot func(x []float32, row []byte) float32) {
	for r := range out {
		out[r] = dot(x, w[r*rb:(r+1)*rb])
	}
}
