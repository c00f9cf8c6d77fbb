package quant

import "encoding/binary"

// Q5_1 weights are ggml's block_q5_1: blocks of 32 values, each stored as
//
//	bytes 0-1   d, fp16 little-endian
//	bytes 2-3   m, fp16 little-endian: the block's minimum
//	bytes 4-7   qh: bit j is the fifth bit of value j, little-endian
//	bytes 8-23  qs[0..15]: the low four bits, as in Q5_0; a 5-bit q decodes to q·d + m
//
// Quantization is ggml's quantize_row_q5_1_ref, in float32: min and max are the block's
// smallest and largest values, d = (max − min)/31 and id = d != 0 ? 1/d : 0; every value
// becomes q = (uint8)((x − min)·id + 0.5), the C conversion truncating toward zero (and,
// unlike Q4_1, not clamped).

const (
	q5_1BlockBytes = 2 + 2 + 4 + q4BlockLen/2 // fp16 d, fp16 m, qh and 16 bytes of nibbles
	q5_1Steps      = float32(31)              // (1 << 5) − 1
)

// quantizeQ5_1 is ggml's quantize_row_q5_1_ref for whole blocks.
func quantizeQ5_1(dst []byte, src []float32) {
	for blk := 0; blk*q4BlockLen < len(src); blk++ {
		x := src[blk*q4BlockLen : (blk+1)*q4BlockLen]
		out := dst[blk*q5_1BlockBytes : (blk+1)*q5_1BlockBytes]
		lo, hi := blockMinMax(x)
		d := (hi - lo) / q5_1Steps
		var id float32
		if d != 0 {
			id = 1 / d
		}
		storeF16(out, d)
		storeF16(out[2:], lo)
		codes := func(v float32) uint8 {
			return uint8(truncToInt32(float32(float32(v-lo)*id) + halfStep))
		}
		packQ5(out[4:8], out[8:8+q4Half], x, codes)
	}
}

// dequantizeQ5_1 is ggml's dequantize_row_q5_1: y = q·d + m, the product rounded first.
func dequantizeQ5_1(dst []float32, src []byte) {
	for blk := 0; blk*q4BlockLen < len(dst); blk++ {
		y := dst[blk*q4BlockLen : (blk+1)*q4BlockLen]
		in := src[blk*q5_1BlockBytes : (blk+1)*q5_1BlockBytes]
		d, m, qh := loadF16(in), loadF16(in[2:]), binary.LittleEndian.Uint32(in[4:])
		for j := range y {
			y[j] = float32(float32(q5Code(qh, in[8:], j))*d) + m
		}
	}
}
