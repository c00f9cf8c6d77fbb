package quant

// Q4_1 weights are ggml's block_q4_1: blocks of 32 values, each stored as
//
//	bytes 0-1   d, fp16 little-endian
//	bytes 2-3   m, fp16 little-endian: the block's minimum
//	bytes 4-19  qs[0..15]: value j (0..15) is the low nibble of qs[j], value 16+j the
//	            high nibble; a nibble q decodes to q·d + m
//
// Quantization is ggml's quantize_row_q4_1_ref, in float32: min and max are the block's
// smallest and largest values, d = (max − min)/15 and id = d != 0 ? 1/d : 0; every value
// becomes q = min(15, (int8)((x − min)·id + 0.5)), the C conversion truncating toward zero.

const (
	q4_1BlockBytes = 4 + q4BlockLen/2 // fp16 d, fp16 m and 16 bytes of nibbles
	q4_1Steps      = float32(15)      // (1 << 4) − 1
	halfStep       = float32(0.5)
)

// quantizeQ4_1 is ggml's quantize_row_q4_1_ref for whole blocks.
func quantizeQ4_1(dst []byte, src []float32) {
	for blk := 0; blk*q4BlockLen < len(src); blk++ {
		x := src[blk*q4BlockLen : (blk+1)*q4BlockLen]
		out := dst[blk*q4_1BlockBytes : (blk+1)*q4_1BlockBytes]
		lo, hi := blockMinMax(x)
		d := (hi - lo) / q4_1Steps
		var id float32
		if d != 0 {
			id = 1 / d
		}
		storeF16(out, d)
		storeF16(out[2:], lo)
		qs := out[4 : 4+q4Half]
		for j := range qs {
			qs[j] = q4_1Nibble(x[j], lo, id) | q4_1Nibble(x[q4Half+j], lo, id)<<4
		}
	}
}

// blockMinMax returns the smallest and largest value as ggml's legacy quantizers find them
// (starting from ±FLT_MAX; NaNs are passed over).
func blockMinMax(x []float32) (lo, hi float32) {
	lo, hi = maxFloat32, -maxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// maxFloat32 is C's FLT_MAX.
const maxFloat32 = float32(3.40282346638528859811704183484516925440e+38)

// q4_1Nibble is MIN(15, (int8_t)((x − min)·id + 0.5f)) stored into a uint8_t.
func q4_1Nibble(x, lo, id float32) uint8 {
	q := int8(truncToInt32(float32(float32(x-lo)*id) + halfStep))
	return uint8(min(q4MaxNibble, q))
}

// dequantizeQ4_1 is ggml's dequantize_row_q4_1: y = q·d + m, the product rounded first.
func dequantizeQ4_1(dst []float32, src []byte) {
	for blk := 0; blk*q4BlockLen < len(dst); blk++ {
		y := dst[blk*q4BlockLen : (blk+1)*q4BlockLen]
		in := src[blk*q4_1BlockBytes : (blk+1)*q4_1BlockBytes]
		d, m := loadF16(in), loadF16(in[2:])
		qs := in[4 : 4+q4Half]
		for j, b := range qs {
			y[j] = float32(float32(b&0x0f)*d) + m
			y[q4Half+j] = float32(float32(b>>4)*d) + m
		}
	}
}
