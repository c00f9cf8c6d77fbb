package quant

// Q3_K weights are ggml's block_q3_K: super-blocks of 256 values in sixteen sub-blocks of
// 16, each stored as
//
//	bytes 0-31    hmask[32]: bit e/32 of hmask[e%32] is the third bit of value e
//	bytes 32-95   qs[64]: the low two bits of every value, laid out as Q2_K's codes
//	bytes 96-107  scales[12]: sixteen 6-bit scales, stored plus 32: the low nibbles of
//	              scales 0-7 in bytes 0-7, of scales 8-15 above them, and the top two bits
//	              of scale j in bits 2·(j/4) of byte 8 + j%4
//	bytes 108-109 d, fp16 little-endian
//
// A value of sub-block j decodes, as in ggml's dequantize_row_q3_K, to (d·(sc_j − 32))·(q −
// 4) with the 3-bit q. Quantization is ggml's quantize_row_q3_K_ref: each sub-block gets a
// scale from make_q3_quants (the grid −4/(value of largest magnitude), then up to five
// rounds of moving single values to the level that improves the weighted least-squares
// fit, weights x²); the scales are quantized to 6 bits against the one of largest
// magnitude (d = −(that scale)/32), and every value is requantized as
// q = clamp(nearest_int(x/(d·sc)), −4, 3) + 4.

const (
	q3KSubLen        = 16
	q3KSubBlocks     = qkK / q3KSubLen
	q3KQsOffset      = qkK / 8
	q3KScaleOffset   = q3KQsOffset + qkK/4
	q3KDOffset       = q3KScaleOffset + 12
	q3KBlockBytes    = q3KDOffset + 2 // 110
	q3KOffset        = 4              // the stored code is value/scale + 4
	q3KScaleOffsetSc = 32             // the stored 6-bit scale is scale + 32
)

// q3KScale returns the signed 6-bit scale sc_j − 32 of sub-block j from the 12 packed
// bytes s, as quantize_row_q3_K_ref reads it back.
func q3KScale(s []byte, j int) int8 {
	var low uint8
	if j < 8 {
		low = s[j] & 0x0f
	} else {
		low = s[j-8] >> 4
	}
	return int8(low|(s[8+j%4]>>uint(2*(j/4))&3)<<4) - q3KScaleOffsetSc
}

// q3KCode returns the 3-bit code of value e of a Q3_K super-block.
func q3KCode(blk []byte, e int) int {
	return int(q2KCode(blk[q3KQsOffset:], e)) | int(blk[e%32]>>uint(e/32)&1)<<2
}

// dequantizeQ3_K is ggml's dequantize_row_q3_K.
func dequantizeQ3_K(dst []float32, src []byte) {
	for blk := 0; blk*qkK < len(dst); blk++ {
		in := src[blk*q3KBlockBytes : (blk+1)*q3KBlockBytes]
		y := dst[blk*qkK : (blk+1)*qkK]
		d := loadF16(in[q3KDOffset:])
		for j := 0; j < q3KSubBlocks; j++ {
			dl := d * float32(q3KScale(in[q3KScaleOffset:], j))
			for e := j * q3KSubLen; e < (j+1)*q3KSubLen; e++ {
				y[e] = dl * float32(q3KCode(in, e)-q3KOffset)
			}
		}
	}
}

// quantizeQ3_K is ggml's quantize_row_q3_K_ref for whole super-blocks.
func quantizeQ3_K(dst []byte, src []float32) {
	var (
		levels [qkK]int8
		scales [q3KSubBlocks]float32
	)
	for blk := 0; blk*qkK < len(src); blk++ {
		x := src[blk*qkK : (blk+1)*qkK]
		out := dst[blk*q3KBlockBytes : (blk+1)*q3KBlockBytes]
		_, maxScale := subBlockScales(scales[:], x, levels[:], makeQ3Quants, q3KOffset)
		s := out[q3KScaleOffset:q3KDOffset]
		clear(s)
		storeF16(out[q3KDOffset:], 0)
		if maxScale != 0 {
			iscale := -q3KScaleOffsetSc / maxScale
			for j, sc := range scales {
				// C stores nearest_int's int into an int8_t (its low byte), then clamps.
				l := max(-32, min(31, int8(nearestInt(iscale*sc)))) + q3KScaleOffsetSc
				if j < 8 {
					s[j] = uint8(l) & 0x0f
				} else {
					s[j-8] |= (uint8(l) & 0x0f) << 4
				}
				s[8+j%4] |= uint8(l>>4) << uint(2*(j/4))
			}
			storeF16(out[q3KDOffset:], 1/iscale)
		}
		d := loadF16(out[q3KDOffset:])
		for j := 0; j < q3KSubBlocks; j++ {
			dj := d * float32(q3KScale(s, j))
			if dj == 0 {
				continue
			}
			for i := j * q3KSubLen; i < (j+1)*q3KSubLen; i++ {
				l := max(-q3KOffset, min(q3KOffset-1, nearestInt(x[i]/dj)))
				levels[i] = int8(l + q3KOffset)
			}
		}
		hmask, qs := out[:q3KQsOffset], out[q3KQsOffset:q3KScaleOffset]
		clear(hmask)
		var codes [qkK]uint8
		for e, l := range levels {
			if l > 3 {
				hmask[e%32] |= 1 << uint(e/32)
				l -= 4
			}
			codes[e] = uint8(l)
		}
		pack2Bit(qs, &codes)
	}
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse, as quantize_row_q3_K_ref calls it:
// levels −nmax..nmax−1 on the grid −nmax/(value of largest magnitude), then up to five
// passes that move single values to a better level (weights x²), keeping a change when it
// improves the least-squares fit. It stores level + nmax into levels and returns the
// scale. Every float32 operation is ggml's, in ggml's order.
func makeQ3Quants(nmax int32, x []float32, levels []int8) float32 {
	levels = levels[:len(x)]
	amax, xmax := extreme(x)
	if amax < q6KGroupMaxEps {
		clear(levels)
		return 0
	}
	iscale := float32(-nmax) / xmax
	var sumLX, sumL2 float32
	for i, v := range x {
		l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
		levels[i] = int8(l)
		w := float32(v * v)
		sumLX += float32(float32(w*v) * float32(l))
		sumL2 += float32(float32(w*float32(l)) * float32(l))
	}
	for range 5 {
		changed := 0
		for i, v := range x {
			w := float32(v * v)
			li := float32(levels[i])
			slx := sumLX - float32(float32(w*v)*li)
			if slx > 0 {
				sl2 := sumL2 - float32(float32(w*li)*li)
				newL := max(-nmax, min(nmax-1, nearestInt(float32(v*sl2)/slx)))
				if newL != int32(levels[i]) {
					fl := float32(newL)
					slx += float32(float32(w*v) * fl)
					sl2 += float32(float32(w*fl) * fl)
					if sl2 > 0 && float32(float32(slx*slx)*sumL2) > float32(float32(sumLX*sumLX)*sl2) {
						levels[i] = int8(newL)
						sumLX, sumL2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range levels {
		levels[i] += int8(nmax)
	}
	if sumL2 > 0 {
		return sumLX / sumL2
	}
	return 0
}
