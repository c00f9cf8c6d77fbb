package quant

import "encoding/binary"

// Q5_0 weights are ggml's block_q5_0: blocks of 32 values, each stored as
//
//	bytes 0-1   d, fp16 little-endian
//	bytes 2-5   qh: bit j is the fifth bit of value j, little-endian
//	bytes 6-21  qs[0..15]: the low four bits of value j (0..15) in the low nibble of
//	            qs[j], of value 16+j in its high nibble; a 5-bit q decodes to (q−16)·d
//
// Quantization is ggml's quantize_row_q5_0_ref, in float32: max is the value of largest
// magnitude (the first one, on ties), d = max/−16 and id = d != 0 ? 1/d : 0; every value
// becomes q = min(31, (int8)(x·id + 16.5)), the C conversion truncating toward zero.

const (
	q5BlockBytes = 2 + 4 + q4BlockLen/2 // fp16 d, qh and 16 bytes of nibbles
	q5Offset     = 16                   // the stored q is value/d + 16
	q5MaxCode    = 31                   // largest 5-bit code
	q5HalfStep   = float32(16.5)        // q5Offset + 1/2, added before truncation
	q5NegMaxStep = float32(-q5Offset)   // max/−16 maps the extreme value to code 0
)

// quantizeQ5_0 is ggml's quantize_row_q5_0_ref for whole blocks.
func quantizeQ5_0(dst []byte, src []float32) {
	for blk := 0; blk*q4BlockLen < len(src); blk++ {
		x := src[blk*q4BlockLen : (blk+1)*q4BlockLen]
		out := dst[blk*q5BlockBytes : (blk+1)*q5BlockBytes]
		var amax, extreme float32
		for _, v := range x {
			if amax < absf(v) {
				amax = absf(v)
				extreme = v
			}
		}
		d := extreme / q5NegMaxStep
		var id float32
		if d != 0 {
			id = 1 / d
		}
		storeF16(out, d)
		codes := func(v float32) uint8 {
			return uint8(min(q5MaxCode, int8(truncToInt32(float32(v*id)+q5HalfStep))))
		}
		packQ5(out[2:6], out[6:6+q4Half], x, codes)
	}
}

// packQ5 stores the 5-bit codes of the 32 values of x: the low four bits as Q4_0's
// nibbles in qs, the fifth bits in the little-endian uint32 qh (bit j for value j).
func packQ5(qh, qs []byte, x []float32, code func(float32) uint8) {
	var h uint32
	for j := range q4Half {
		c0, c1 := code(x[j]), code(x[q4Half+j])
		qs[j] = c0&0x0f | (c1&0x0f)<<4
		h |= uint32(c0&0x10)>>4<<j | uint32(c1&0x10)>>4<<(j+q4Half)
	}
	binary.LittleEndian.PutUint32(qh, h)
}

// q5Codes returns the 5-bit code of value j of a Q5_0 or Q5_1 block with fifth bits qh and
// nibbles qs, as dequantize_row_q5_0 reads them.
func q5Code(qh uint32, qs []byte, j int) int {
	if j < q4Half {
		return int(qs[j]&0x0f) | int(qh>>j&1)<<4
	}
	return int(qs[j-q4Half]>>4) | int(qh>>j&1)<<4
}

// dequantizeQ5_0 is ggml's dequantize_row_q5_0: y = (q−16)·d.
func dequantizeQ5_0(dst []float32, src []byte) {
	for blk := 0; blk*q4BlockLen < len(dst); blk++ {
		y := dst[blk*q4BlockLen : (blk+1)*q4BlockLen]
		in := src[blk*q5BlockBytes : (blk+1)*q5BlockBytes]
		d, qh := loadF16(in), binary.LittleEndian.Uint32(in[2:])
		for j := range y {
			y[j] = float32(q5Code(qh, in[6:], j)-q5Offset) * d
		}
	}
}
