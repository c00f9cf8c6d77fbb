package kernels

import "github.com/kvref/kvref/internal/half"

// dotKGeneric is the definition of the k-quant row dots: the row's super-blocks of format
// f against x, their integers from f.sums.
func dotKGeneric(x *Q8KInput, row []byte, f *kFormat) float32 {
	var acc float32
	for b := 0; b < x.n/KBlockLen; b++ {
		blk := row[b*f.blockBytes : (b+1)*f.blockBytes]
		xb := x.block(b)
		I, M := f.sums(blk, xb)
		xd := q8KScale(xb)
		d1 := half.F16ToF32(le16(blk[f.dOffset:])) * xd
		if f.offset != 0 {
			acc += float32(float32(I-f.offset*M) * d1)
			continue
		}
		m1 := half.F16ToF32(le16(blk[f.dOffset+2:])) * xd
		acc += float32(float32(float32(I)*d1) - float32(float32(M)*m1))
	}
	return acc
}

// kRowsGeneric is the definition of the k-quant *Rows kernels: one row dot per output.
func kRowsGeneric(f *kFormat, out []float32, x *Q8KInput, w []byte, rb int) {
	for r := range out {
		out[r] = dotKGeneric(x, w[r*rb:(r+1)*rb], f)
	}
}
