package quant

// Q5_K weights are ggml's block_q5_K: super-blocks of 256 values in eight sub-blocks of
// 32, each stored as
//
//	bytes 0-1     d, fp16 little-endian: the scale of the sub-block scales
//	bytes 2-3     dmin, fp16 little-endian: the scale of the sub-block mins
//	bytes 4-15    scales[12]: eight 6-bit scales and mins, packed as in Q4_K
//	bytes 16-47   qh[32]: bit j of qh[l] is the fifth bit of value 32j+l
//	bytes 48-175  qs[128]: the low four bits, laid out as Q4_K's nibbles
//
// A value decodes, as in ggml's dequantize_row_q5_K, to (d·sc)·q − dmin·m with the 5-bit
// q = nibble + 16·bit. Quantization is ggml's quantize_row_q5_K_ref: Q4_K's search with
// 31 as the largest code (make_qkx2_quants with rmin −0.5, rdelta 0.1 and 15 steps), the
// same 6-bit scales, and every value requantized as q = clamp(nearest_int((x + dmin·m)/
// (d·sc)), 0, 31).

const (
	q5KQhOffset   = q4KQsOffset         // start of qh
	q5KQsOffset   = q5KQhOffset + qkK/8 // start of the nibbles
	q5KBlockBytes = q5KQsOffset + qkK/2 // 176
	q5KMaxCode    = 31                  // largest 5-bit code
	q5KHighBit    = 16                  // the fifth bit's weight
)

var q5KSearch = scaleMinSearch{q5KMaxCode, -0.5, 0.1, 15}

// q5KCode returns the 5-bit code of value e of a Q5_K super-block.
func q5KCode(blk []byte, e int) uint8 {
	j, l := e/q4KSubLen, e%q4KSubLen
	lo := blk[q5KQsOffset+j/2*q4KChunkBytes+l] >> uint(j%2*4) & 0x0f
	return lo | (blk[q5KQhOffset+l]>>uint(j)&1)<<4
}

// dequantizeQ5_K is ggml's dequantize_row_q5_K.
func dequantizeQ5_K(dst []float32, src []byte) {
	for blk := 0; blk*qkK < len(dst); blk++ {
		in := src[blk*q5KBlockBytes : (blk+1)*q5KBlockBytes]
		y := dst[blk*qkK : (blk+1)*qkK]
		for j := 0; j < q4KSubBlocks; j++ {
			d1, m1 := q4KSubScales(in, j)
			for e := j * q4KSubLen; e < (j+1)*q4KSubLen; e++ {
				y[e] = q4KValue(d1, m1, q5KCode(in, e))
			}
		}
	}
}

// quantizeQ5_K is ggml's quantize_row_q5_K_ref for whole super-blocks.
func quantizeQ5_K(dst []byte, src []float32) {
	var levels [qkK]uint8
	for blk := 0; blk*qkK < len(src); blk++ {
		x := src[blk*qkK : (blk+1)*qkK]
		out := dst[blk*q5KBlockBytes : (blk+1)*q5KBlockBytes]
		quantizeScaleMinK(out[:q4KQsOffset], x, &levels, &q5KSearch)
		qh, qs := out[q5KQhOffset:q5KQsOffset], out[q5KQsOffset:]
		clear(qh)
		for c := 0; c < qkK/q4KChunkLen; c++ {
			for l := 0; l < q4KChunkBytes; l++ {
				l1, l2 := levels[c*q4KChunkLen+l], levels[c*q4KChunkLen+q4KChunkBytes+l]
				if l1 >= q5KHighBit {
					l1 -= q5KHighBit
					qh[l] |= 1 << uint(2*c)
				}
				if l2 >= q5KHighBit {
					l2 -= q5KHighBit
					qh[l] |= 2 << uint(2*c)
				}
				qs[c*q4KChunkBytes+l] = l1 | l2<<4
			}
		}
	}
}
