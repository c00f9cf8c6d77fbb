package quant

// Q4_K weights are ggml's block_q4_K: super-blocks of 256 values, made of eight
// sub-blocks of 32 values, each stored as
//
//	bytes 0-1     d, fp16 little-endian: the scale of the sub-block scales
//	bytes 2-3     dmin, fp16 little-endian: the scale of the sub-block mins
//	bytes 4-15    scales[12]: eight 6-bit scales sc[j] and eight 6-bit mins m[j]
//	bytes 16-143  qs[128]: 4-bit values
//
// The 6-bit pairs are packed as ggml's get_scale_min_k4 reads them: for j < 4,
// sc[j] = scales[j] & 63 and m[j] = scales[j+4] & 63; for j >= 4, the low four bits of
// sc[j] and m[j] are the low and high nibbles of scales[j+4], and their top two bits are
// the top two bits of scales[j−4] and of scales[j]. Value 32j+l of the super-block
// (sub-block j, 0 <= l < 32) is the nibble q of qs[32·(j/2)+l], the low nibble for even
// j and the high nibble for odd j: each 64-value chunk is stored as 32 bytes whose low
// nibbles are its first 32 values and whose high nibbles are the next 32. A value
// decodes, as in ggml's dequantize_row_q4_K, to
//
//	d1 = d·sc[j];  m1 = dmin·m[j];  y = d1·q − m1
//
// Quantization is ggml's quantize_row_q4_K_ref: each sub-block gets a scale and a min
// from make_qkx2_quants (a weighted least-squares search over 21 candidate grids, with
// weights sqrt(mean x²) + |x|); the scales and the mins are quantized to 6 bits against
// the largest of each (d = max scale/63, dmin = max min/63), and every value is then
// requantized with the stored scales as q = clamp(nearest_int((x + dmin·m)/(d·sc)), 0, 15).

const (
	qkK           = 256 // values per k-quant super-block (ggml's QK_K)
	q4KSubLen     = 32  // values per Q4_K sub-block
	q4KSubBlocks  = qkK / q4KSubLen
	q4KScaleBytes = 12                   // packed 6-bit scales and mins (ggml's K_SCALE_SIZE)
	q4KQsOffset   = 4 + q4KScaleBytes    // start of the nibbles
	q4KBlockBytes = q4KQsOffset + qkK/2  // 144
	q4KMaxNibble  = 15                   // largest 4-bit value
	q4KMaxScale   = 63                   // largest 6-bit scale or min
	q4KChunkBytes = 32                   // bytes holding one 64-value chunk
	q4KChunkLen   = 2 * q4KChunkBytes    // values per chunk (two sub-blocks)
	q4KRMin       = float32(-1)          // make_qkx2_quants' rmin for Q4_K
	q4KRDelta     = float32(0.1)         // ... its rdelta
	q4KSteps      = 20                   // ... and its nstep
	q4KSubLenF    = float32(q4KSubLen)   // the divisor of the sub-block's mean square
	q4KMaxScaleF  = float32(q4KMaxScale) // 63.f
)

// q4KScaleMin is ggml's get_scale_min_k4: the 6-bit scale and min of sub-block j from the
// 12 packed bytes s.
func q4KScaleMin(j int, s []byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0x0f | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// q4KSubScales returns sub-block j's d1 = d·sc and m1 = dmin·m, as dequantize_row_q4_K
// computes them. m1 is rounded on its own (it is later subtracted).
func q4KSubScales(blk []byte, j int) (d1, m1 float32) {
	d := loadF16(blk[0:])
	dmin := loadF16(blk[2:])
	sc, m := q4KScaleMin(j, blk[4:q4KQsOffset])
	return d * float32(sc), float32(dmin * float32(m))
}

// q4KValue is one Q4_K value with nibble q, as dequantize_row_q4_K computes it.
func q4KValue(d1, m1 float32, q uint8) float32 {
	return float32(d1*float32(q)) - m1
}

// dequantizeQ4_K is ggml's dequantize_row_q4_K.
func dequantizeQ4_K(dst []float32, src []byte) {
	for blk := 0; blk*qkK < len(dst); blk++ {
		in := src[blk*q4KBlockBytes : (blk+1)*q4KBlockBytes]
		y := dst[blk*qkK : (blk+1)*qkK]
		for j := 0; j < q4KSubBlocks; j++ {
			d1, m1 := q4KSubScales(in, j)
			off := q4KQsOffset + j/2*q4KChunkBytes
			qs := in[off : off+q4KSubLen]
			shift := uint(j % 2 * 4)
			ys := y[j*q4KSubLen : (j+1)*q4KSubLen]
			for l, b := range qs {
				ys[l] = q4KValue(d1, m1, b>>shift&0x0f)
			}
		}
	}
}

// quantizeQ4_K is ggml's quantize_row_q4_K_ref for whole super-blocks.
func quantizeQ4_K(dst []byte, src []float32) {
	var levels [qkK]uint8 // ggml's L: the 4-bit value of every element
	for blk := 0; blk*qkK < len(src); blk++ {
		x := src[blk*qkK : (blk+1)*qkK]
		out := dst[blk*q4KBlockBytes : (blk+1)*q4KBlockBytes]
		quantizeScaleMinK(out[:q4KQsOffset], x, &levels, &q4KSearch)

		// Each 64-value chunk: 32 bytes, low nibbles first.
		qs := out[q4KQsOffset:]
		for c := 0; c < qkK/q4KChunkLen; c++ {
			for l := 0; l < q4KChunkBytes; l++ {
				qs[c*q4KChunkBytes+l] = levels[c*q4KChunkLen+l] | levels[c*q4KChunkLen+q4KChunkBytes+l]<<4
			}
		}
	}
}

// scaleMinSearch is what the Q4_K and Q5_K quantizers pass to make_qkx2_quants: the
// largest code and the candidate grids.
type scaleMinSearch struct {
	maxCode      int32
	rmin, rdelta float32
	steps        int
}

var q4KSearch = scaleMinSearch{q4KMaxNibble, q4KRMin, q4KRDelta, q4KSteps}

// quantizeScaleMinK is the part quantize_row_q4_K_ref and quantize_row_q5_K_ref share for
// one super-block x: a scale and a min for each sub-block of 32 (make_qkx2_quants with
// weights sqrt(mean x²) + |x|), the scales and mins quantized to 6 bits against the
// largest of each and stored with d and dmin in hdr (the first 16 bytes of the block), and
// every value's code requantized with the stored scales into levels.
func quantizeScaleMinK(hdr []byte, x []float32, levels *[qkK]uint8, p *scaleMinSearch) {
	var (
		aux     [q4KSubLen]uint8
		weights [q4KSubLen]float32
		scales  [q4KSubBlocks]float32
		mins    [q4KSubBlocks]float32
	)
	// A scale and a min for every sub-block.
	var maxScale, maxMin float32
	for j := 0; j < q4KSubBlocks; j++ {
		xs := x[j*q4KSubLen : (j+1)*q4KSubLen]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrtf(sumX2 / q4KSubLenF)
		for l, v := range xs {
			weights[l] = avX + absf(v)
		}
		scales[j], mins[j] = makeQKX2Quants(p.maxCode, xs, weights[:], levels[j*q4KSubLen:(j+1)*q4KSubLen], aux[:],
			p.rmin, p.rdelta, p.steps, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}

	// The scales and mins, quantized to 6 bits against the largest of each.
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = q4KMaxScaleF / maxScale
	}
	if maxMin > 0 {
		invMin = q4KMaxScaleF / maxMin
	}
	var ls, lm [q4KSubBlocks]uint8
	for j := range ls {
		// C assigns nearest_int's int to a uint8_t (keeping the low byte), then clamps.
		ls[j] = min(q4KMaxScale, uint8(nearestInt(invScale*scales[j])))
		lm[j] = min(q4KMaxScale, uint8(nearestInt(invMin*mins[j])))
	}
	packed := hdr[4:q4KQsOffset]
	pk := q4KPackScales(ls, lm)
	copy(packed, pk[:])
	storeF16(hdr[0:], maxScale/q4KMaxScaleF)
	storeF16(hdr[2:], maxMin/q4KMaxScaleF)

	// Every value requantized with the stored scales; a sub-block whose stored scale
	// is 0 keeps the values make_qkx2_quants chose.
	d := loadF16(hdr[0:])
	dmin := loadF16(hdr[2:])
	for j := 0; j < q4KSubBlocks; j++ {
		sc, m := q4KScaleMin(j, packed)
		dj := d * float32(sc)
		if dj == 0 {
			continue
		}
		dm := float32(dmin * float32(m))
		for i := j * q4KSubLen; i < (j+1)*q4KSubLen; i++ {
			l := nearestInt((x[i] + dm) / dj)
			levels[i] = uint8(max(0, min(p.maxCode, l)))
		}
	}
}

// makeQKX2Quants is ggml's make_qkx2_quants: it fits the n = len(x) values x with levels
// L[i] in 0..nmax as x ≈ scale·L − min (min >= 0), minimising the weighted squared error
// (the weighted absolute error with useMAD, as Q2_K asks) over the grid spanning
// [min(x, 0), max(x)] and nstep+1 wider or narrower candidates, each refitted by weighted
// least squares. It returns scale and min; L receives the levels, and aux is scratch of
// the same length. Every float32 operation is ggml's, in ggml's order.
func makeQKX2Quants(nmax int32, x, weights []float32, levels, aux []uint8, rmin, rdelta float32, nstep int, useMAD bool) (scale, theMin float32) {
	n := len(x)
	levels = levels[:n]
	aux = aux[:n]
	weights = weights[:n]
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(levels)
		return 0, -lo
	}
	fmax := float32(nmax)
	iscale := fmax / (hi - lo)
	scale = 1 / iscale
	var bestError float32
	for i := range x {
		l := nearestInt(iscale * (x[i] - lo))
		levels[i] = uint8(max(0, min(nmax, l)))
		bestError += float32(weights[i] * errorTerm(float32(float32(scale*float32(levels[i]))+lo)-x[i], useMAD))
	}
	if nstep < 1 {
		return scale, -lo
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + fmax) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i := range x {
			l := max(0, min(nmax, nearestInt(iscale*(x[i]-lo))))
			aux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(w * fl * fl)
			sumXL += float32(w * fl * x[i])
		}
		det := float32(sumW*sumL2) - float32(sumL*sumL)
		if det > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / det
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / det
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := range x {
				curError += float32(weights[i] * errorTerm(float32(float32(thisScale*float32(aux[i]))+thisMin)-x[i], useMAD))
			}
			if curError < bestError {
				copy(levels, aux)
				bestError = curError
				scale = thisScale
				lo = thisMin
			}
		}
	}
	return scale, -lo
}

// errorTerm is make_qkx2_quants' error of one value: diff² or, with useMAD, |diff|.
func errorTerm(diff float32, useMAD bool) float32 {
	if useMAD {
		return absf(diff)
	}
	return float32(diff * diff)
}

// q4KPackScales packs eight 6-bit scales and mins into 12 bytes as
// quantize_row_q4_K_ref does; q4KScaleMin reads them back.
func q4KPackScales(sc, m [q4KSubBlocks]uint8) [q4KScaleBytes]byte {
	var p [q4KScaleBytes]byte
	for j := 0; j < q4KSubBlocks; j++ {
		if j < 4 {
			p[j] = sc[j]
			p[j+4] = m[j]
		} else {
			p[j+4] = sc[j]&0x0f | (m[j]&0x0f)<<4
			p[j-4] |= (sc[j] >> 4) << 6
			p[j] |= (m[j] >> 4) << 6
		}
	}
	return p
}
