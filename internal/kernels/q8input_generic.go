package kernels

import (
	"math"

	"github.com/kvref/kvref/internal/half"
)

// The portable definitions of Q8Input.Quantize, DotQ8_0Q8 and DotQ8_0Q8Rows; the assembly
// (q8input_avx2_amd64.s, q8input_avx512_amd64.s) computes the same bits.

// quantizeBlocksGeneric is the definition of Quantize's work, block by block (v already
// sized for x).
func quantizeBlocksGeneric(v *Q8Input, x []float32) {
	for b := 0; b < len(x)/QBlockLen; b++ {
		xs := x[b*QBlockLen : (b+1)*QBlockLen : (b+1)*QBlockLen]
		qs := v.qs[b*QBlockLen : (b+1)*QBlockLen : (b+1)*QBlockLen]
		// For non-negative floats the order of the bit patterns is the order of the
		// values, and every NaN and infinity lies above the largest finite value.
		var amaxBits uint32
		for _, f := range xs {
			amaxBits = max(amaxBits, math.Float32bits(f)&^(1<<31))
		}
		amax := math.Float32frombits(amaxBits)
		v.amax[b] = amax
		var d float32
		switch {
		case amaxBits >= 0x7f800000: // a NaN or an infinity
			d = float32(math.NaN())
			clear(qs)
		default:
			d = half.F16ToF32(half.F32ToF16(amax / 127))
			if d == 0 { // every product with the block is 0 whatever q is
				clear(qs)
				break
			}
			id := 127 / amax
			for j, f := range xs {
				// |f·id| <= 127 up to rounding; adding and subtracting 1.5·2^23 rounds
				// it to an integer, half to even, in float32 arithmetic.
				p := float32(f * id)
				qs[j] = int8((p + roundMagic) - roundMagic)
			}
		}
		v.d[b] = d
		for l := range 8 {
			v.dLanes[8*b+l] = d
			v.corr[8*b+l] = -128 * (int32(qs[4*l]) + int32(qs[4*l+1]) + int32(qs[4*l+2]) + int32(qs[4*l+3]))
		}
	}
}

// dotQ8_0Q8Generic is the definition of DotQ8_0Q8.
func dotQ8_0Q8Generic(x *Q8Input, row []byte) float32 {
	var acc [16]float32
	for b := 0; b < x.n/QBlockLen; b++ {
		blk := row[b*Q8_0BlockBytes : (b+1)*Q8_0BlockBytes : (b+1)*Q8_0BlockBytes]
		s := half.F16ToF32(le16(blk)) * x.d[b]
		wq := blk[2:]
		xq := x.qs[b*QBlockLen : (b+1)*QBlockLen : (b+1)*QBlockLen]
		lanes := (*[8]float32)(acc[8*(b&1):])
		for l := range lanes {
			p := int32(int8(wq[4*l]))*int32(xq[4*l]) +
				int32(int8(wq[4*l+1]))*int32(xq[4*l+1]) +
				int32(int8(wq[4*l+2]))*int32(xq[4*l+2]) +
				int32(int8(wq[4*l+3]))*int32(xq[4*l+3])
			lanes[l] += float32(float32(p) * s)
		}
	}
	return ReduceLanes(acc[0]+acc[8], acc[1]+acc[9], acc[2]+acc[10], acc[3]+acc[11],
		acc[4]+acc[12], acc[5]+acc[13], acc[6]+acc[14], acc[7]+acc[15])
}

// q8RowsGeneric is the definition of DotQ8_0Q8Rows: one row dot per output, in order.
func q8RowsGeneric(out []float32, x *Q8Input, w []byte, rb int) {
	for r := range out {
		out[r] = dotQ8_0Q8Generic(x, w[r*rb:(r+1)*rb])
	}
}
