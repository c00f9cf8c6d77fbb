package quant

// Q2_K weights are ggml's block_q2_K: super-blocks of 256 values in sixteen sub-blocks of
// 16, each stored as
//
//	bytes 0-15    scales[16]: the 4-bit scale sc (low nibble) and min m (high nibble) of
//	              each sub-block
//	bytes 16-79   qs[64]: 2-bit codes; in half h = e/128, value e is bits 2c..2c+1 of
//	              qs[32h + e%32], c = (e%128)/32
//	bytes 80-81   d, fp16 little-endian
//	bytes 82-83   dmin, fp16 little-endian
//
// A value of sub-block j decodes, as in ggml's dequantize_row_q2_K, to
// (d·sc)·q − dmin·m (each product rounded). Quantization is ggml's quantize_row_q2_K_ref:
// each sub-block gets a scale and a min from make_qkx2_quants (largest code 3, weights |x|,
// the weighted absolute error, rmin −0.5, rdelta 0.1, 15 steps); scales and mins are
// quantized to 4 bits against the largest of each (d = max scale/15, dmin = max min/15),
// and every value is requantized as q = clamp(nearest_int((x + dmin·m)/(d·sc)), 0, 3).

const (
	q2KSubLen     = 16 // values per Q2_K sub-block
	q2KSubBlocks  = qkK / q2KSubLen
	q2KQsOffset   = q2KSubBlocks
	q2KDOffset    = q2KQsOffset + qkK/4
	q2KBlockBytes = q2KDOffset + 4 // 84
	q2KMaxCode    = 3
	q2KMaxScale   = float32(15) // 4-bit scales and mins
)

// q2KCode returns the 2-bit code of value e of a Q2_K super-block (or of Q3_K's low bits,
// stored the same way at qs).
func q2KCode(qs []byte, e int) uint8 {
	return qs[32*(e/128)+e%32] >> uint(2*(e%128/32)) & 3
}

// pack2Bit stores the 2-bit codes levels[e] & 3 as q2KCode reads them.
func pack2Bit(qs []byte, levels *[qkK]uint8) {
	for j := 0; j < qkK; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = levels[j+l]&3 | (levels[j+l+32]&3)<<2 | (levels[j+l+64]&3)<<4 | (levels[j+l+96]&3)<<6
		}
	}
}

// dequantizeQ2_K is ggml's dequantize_row_q2_K.
func dequantizeQ2_K(dst []float32, src []byte) {
	for blk := 0; blk*qkK < len(dst); blk++ {
		in := src[blk*q2KBlockBytes : (blk+1)*q2KBlockBytes]
		y := dst[blk*qkK : (blk+1)*qkK]
		d, dmin := loadF16(in[q2KDOffset:]), loadF16(in[q2KDOffset+2:])
		for j := 0; j < q2KSubBlocks; j++ {
			dl := d * float32(in[j]&0x0f)
			ml := dmin * float32(in[j]>>4)
			for e := j * q2KSubLen; e < (j+1)*q2KSubLen; e++ {
				y[e] = float32(dl*float32(q2KCode(in[q2KQsOffset:], e))) - ml
			}
		}
	}
}

// quantizeQ2_K is ggml's quantize_row_q2_K_ref for whole super-blocks.
func quantizeQ2_K(dst []byte, src []float32) {
	var (
		levels  [qkK]uint8
		aux     [q2KSubLen]uint8
		weights [q2KSubLen]float32
		scales  [q2KSubBlocks]float32
		mins    [q2KSubBlocks]float32
	)
	for blk := 0; blk*qkK < len(src); blk++ {
		x := src[blk*qkK : (blk+1)*qkK]
		out := dst[blk*q2KBlockBytes : (blk+1)*q2KBlockBytes]
		var maxScale, maxMin float32
		for j := 0; j < q2KSubBlocks; j++ {
			xs := x[j*q2KSubLen : (j+1)*q2KSubLen]
			for l, v := range xs {
				weights[l] = absf(v)
			}
			scales[j], mins[j] = makeQKX2Quants(q2KMaxCode, xs, weights[:], levels[j*q2KSubLen:(j+1)*q2KSubLen], aux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		sc := out[:q2KSubBlocks]
		clear(sc)
		storeF16(out[q2KDOffset:], 0)
		storeF16(out[q2KDOffset+2:], 0)
		if maxScale > 0 {
			iscale := q2KMaxScale / maxScale
			for j := range sc {
				sc[j] = uint8(nearestInt(iscale * scales[j])) // C keeps the int's low byte
			}
			storeF16(out[q2KDOffset:], maxScale/q2KMaxScale)
		}
		if maxMin > 0 {
			iscale := q2KMaxScale / maxMin
			for j := range sc {
				sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			storeF16(out[q2KDOffset+2:], maxMin/q2KMaxScale)
		}
		d, dmin := loadF16(out[q2KDOffset:]), loadF16(out[q2KDOffset+2:])
		for j := 0; j < q2KSubBlocks; j++ {
			dj := d * float32(sc[j]&0x0f)
			if dj == 0 {
				continue
			}
			dm := dmin * float32(sc[j]>>4)
			for i := j * q2KSubLen; i < (j+1)*q2KSubLen; i++ {
				l := nearestInt((x[i] + dm) / dj)
				levels[i] = uint8(max(0, min(q2KMaxCode, l)))
			}
		}
		pack2Bit(out[q2KQsOffset:q2KDOffset], &levels)
	}
}
