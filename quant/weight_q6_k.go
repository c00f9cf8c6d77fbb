package quant

// Q6_K weights are ggml's block_q6_K: super-blocks of 256 values, made of sixteen
// sub-blocks of 16 values, each stored as
//
//	bytes 0-127    ql[128]: the low four bits of every value
//	bytes 128-191  qh[64]: the high two bits of every value
//	bytes 192-207  scales[16]: int8, one per sub-block
//	bytes 208-209  d, fp16 little-endian
//
// The super-block is two halves of 128 values, half h using ql[64h:64h+64] and
// qh[32h:32h+32]. Within a half, value 32k+l (quarter k = 0..3, 0 <= l < 32) has its low
// bits in ql[32·(k%2)+l], the low nibble for k < 2 and the high nibble for k >= 2, and its
// high bits in bits 2k and 2k+1 of qh[l]. The 6-bit q of value e belongs to sub-block e/16
// and decodes, as in ggml's dequantize_row_q6_K, to
//
//	y = d·scales[e/16]·(q − 32)      (the first product rounded, then the second)
//
// Quantization is ggml's quantize_row_q6_K_ref: each sub-block gets a scale from
// make_qx_quants (nmax 32, weights x²: the best of 19 candidate grids around
// −32/(value of largest magnitude), each refitted by weighted least squares); the scales
// are quantized to int8 against the one of largest magnitude (d = −(that scale)/128,
// so it becomes −128), and every value is then requantized with the stored scale as
// q = clamp(nearest_int(x/(d·scale)), −32, 31) + 32. A super-block whose scales are all
// below 1e-15 in magnitude is stored as zeros.

const (
	q6KSubLen       = 16 // values per Q6_K sub-block
	q6KSubBlocks    = qkK / q6KSubLen
	q6KHalfLen      = qkK / 2 // values per half
	q6KQuarterLen   = 32      // values per quarter of a half
	q6KQhOffset     = qkK / 2 // start of qh
	q6KScaleOffset  = q6KQhOffset + qkK/4
	q6KDOffset      = q6KScaleOffset + q6KSubBlocks
	q6KBlockBytes   = q6KDOffset + 2 // 210
	q6KOffset       = 32             // the stored 6-bit q is value/scale + 32
	q6KMaxScale     = 127            // largest int8 scale
	q6KScaleRange   = float32(-128)  // the largest-magnitude scale becomes −128
	q6KGroupMaxEps  = float32(1e-15) // ggml's GROUP_MAX_EPS: smaller maxima count as zero
	q6KSearchSteps  = 9              // make_qx_quants tries nmax ± 0.1·(1..9)
	q6KSearchDeltaF = float32(0.1)
)

// q6KSubScale returns d·scales[j] for a Q6_K block, the first product of every value of
// sub-block j.
func q6KSubScale(blk []byte, j int) float32 {
	return loadF16(blk[q6KDOffset:]) * float32(int8(blk[q6KScaleOffset+j]))
}

// q6KLevel returns the 6-bit q of value e of a Q6_K block.
func q6KLevel(blk []byte, e int) int8 {
	h, k, l := e/q6KHalfLen, e%q6KHalfLen/q6KQuarterLen, e%q6KQuarterLen
	lo := blk[h*64+k%2*32+l] >> uint(k/2*4) & 0x0f
	hi := blk[q6KQhOffset+h*32+l] >> uint(2*k) & 3
	return int8(lo | hi<<4)
}

// q6KValue is one Q6_K value with level q in sub-block scale ds = d·scales[j], as
// dequantize_row_q6_K computes it.
func q6KValue(ds float32, q int8) float32 {
	return float32(ds * float32(q-q6KOffset))
}

// dequantizeQ6_K is ggml's dequantize_row_q6_K.
func dequantizeQ6_K(dst []float32, src []byte) {
	for blk := 0; blk*qkK < len(dst); blk++ {
		in := src[blk*q6KBlockBytes : (blk+1)*q6KBlockBytes]
		y := dst[blk*qkK : (blk+1)*qkK]
		for j := 0; j < q6KSubBlocks; j++ {
			ds := q6KSubScale(in, j)
			for e := j * q6KSubLen; e < (j+1)*q6KSubLen; e++ {
				y[e] = q6KValue(ds, q6KLevel(in, e))
			}
		}
	}
}

// subBlockScales is the first step of ggml's q3_K and q6_K quantizers: it cuts the
// super-block x (and levels, the same length) into len(scales) equal sub-blocks, sets
// scales[j] to quantize(nmax, sub-block j, its levels) (make_q3_quants or make_qx_quants)
// and returns the largest |scale| and the scale it belongs to (see extreme).
func subBlockScales(scales, x []float32, levels []int8, quantize func(nmax int32, x []float32, levels []int8) float32, nmax int32) (amax, maxScale float32) {
	n := len(x) / len(scales)
	for j := range scales {
		scales[j] = quantize(nmax, x[j*n:(j+1)*n], levels[j*n:(j+1)*n])
	}
	return extreme(scales)
}

// quantizeQ6_K is ggml's quantize_row_q6_K_ref for whole super-blocks.
func quantizeQ6_K(dst []byte, src []float32) {
	var (
		levels [qkK]int8 // ggml's L: q = level, 0..63
		scales [q6KSubBlocks]float32
	)
	for blk := 0; blk*qkK < len(src); blk++ {
		x := src[blk*qkK : (blk+1)*qkK]
		out := dst[blk*q6KBlockBytes : (blk+1)*q6KBlockBytes]

		maxAbsScale, maxScale := subBlockScales(scales[:], x, levels[:], makeQXQuants, q6KOffset)
		if maxAbsScale < q6KGroupMaxEps {
			clear(out) // all levels, scales and d zero
			continue
		}

		// The scales as int8 against the largest; C converts nearest_int's int to int8_t
		// by keeping the low byte.
		iscale := q6KScaleRange / maxScale
		storeF16(out[q6KDOffset:], 1/iscale)
		for j, s := range scales {
			out[q6KScaleOffset+j] = uint8(int8(min(q6KMaxScale, nearestInt(iscale*s))))
		}

		// Every value requantized with the stored scales; a sub-block whose stored scale
		// is 0 keeps the levels make_qx_quants chose.
		for j := 0; j < q6KSubBlocks; j++ {
			ds := q6KSubScale(out, j)
			if ds == 0 {
				continue
			}
			for i := j * q6KSubLen; i < (j+1)*q6KSubLen; i++ {
				l := max(-q6KOffset, min(q6KOffset-1, nearestInt(x[i]/ds)))
				levels[i] = int8(l + q6KOffset)
			}
		}

		// Pack: per half, ql holds quarters 0 and 2 (low, high nibble) in its first 32
		// bytes and quarters 1 and 3 in the next 32; qh holds the four quarters' top bits.
		for h := 0; h < 2; h++ {
			lv := levels[h*q6KHalfLen : (h+1)*q6KHalfLen]
			ql := out[h*64 : h*64+64]
			qh := out[q6KQhOffset+h*32 : q6KQhOffset+h*32+32]
			for l := 0; l < q6KQuarterLen; l++ {
				q1, q2, q3, q4 := uint8(lv[l]), uint8(lv[l+32]), uint8(lv[l+64]), uint8(lv[l+96])
				ql[l] = q1&0x0f | (q3&0x0f)<<4
				ql[l+32] = q2&0x0f | (q4&0x0f)<<4
				qh[l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}

// makeQXQuants is ggml's make_qx_quants with rmse_type 1 and no importance weights, as
// quantize_row_q6_K_ref calls it: it fits the n = len(x) values with levels l in
// −nmax..nmax−1 as x ≈ scale·l, weighting each value by x², and tries the grids
// −(nmax + 0.1·is)/max for is = −9..9, keeping the best weighted least-squares fit. It
// returns the scale and stores l + nmax into levels. Every float32 operation is ggml's,
// in ggml's order.
func makeQXQuants(nmax int32, x []float32, levels []int8) float32 {
	levels = levels[:len(x)]
	amax, xmax := extreme(x) // ggml's amax and max
	if amax < q6KGroupMaxEps {
		clear(levels)
		return 0
	}
	fmax := float32(nmax)
	iscale := -fmax / xmax
	var sumLX, sumL2 float32
	for i, v := range x {
		l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
		levels[i] = int8(l + nmax)
		w := float32(v * v)
		fl := float32(l)
		sumLX += float32(w * v * fl)
		sumL2 += float32(w * fl * fl)
	}
	var scale float32
	if sumL2 != 0 {
		scale = sumLX / sumL2
	}
	best := scale * sumLX
	for is := -q6KSearchSteps; is <= q6KSearchSteps; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fmax + float32(q6KSearchDeltaF*float32(is))) / xmax
		sumLX, sumL2 = 0, 0
		for _, v := range x {
			l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
			w := float32(v * v)
			fl := float32(l)
			sumLX += float32(w * v * fl)
			sumL2 += float32(w * fl * fl)
		}
		if sumL2 > 0 && float32(sumLX*sumLX) > float32(best*sumL2) {
			for i, v := range x {
				levels[i] = int8(nmax + max(-nmax, min(nmax-1, nearestInt(iscale*v))))
			}
			scale = sumLX / sumL2
			best = scale * sumLX
		}
	}
	return scale
}
