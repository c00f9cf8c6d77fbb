package kernels

// The integers I and M of a k-quant super-block (kquant.go), computed straight from the
// stored bytes, type by type: the portable row dots use these, and TestKSumsMatchDecode holds
// each to kSums over the block decoded value by value (the readable form of the layouts).

// q8KCodes views a stored Q8_K super-block's 256 codes.
func q8KCodes(xb []byte) *[KBlockLen]byte { return (*[KBlockLen]byte)(xb[:KBlockLen]) }

// sumsScaleMins32 finishes the super-block of a type with a scale and a min per 32 values:
// I = Σ sc_j·p_j, M = Σ m_j·(bsum_2j + bsum_2j+1).
func sumsScaleMins32(p *[8]int32, s []byte, xb []byte) (I, M int32) {
	for j := range 8 {
		sc, m := scaleMinK4(s, j)
		I += int32(sc) * p[j]
		M += int32(m) * (q8KSum(xb, 2*j) + q8KSum(xb, 2*j+1))
	}
	return I, M
}

// sumsQ4_K: sub-block j's 32 codes are the low (j even) or high (j odd) nibbles of
// qs[32·(j/2)..] (from byte 16).
func sumsQ4_K(blk, xb []byte) (I, M int32) { return sumsNibbles(blk, xb, 16, &noFifthBits) }

// sumsQ5_K: Q4_K's nibbles (from byte 48) plus 16 for bit j of qh[l] (bytes 16-47).
func sumsQ5_K(blk, xb []byte) (I, M int32) {
	return sumsNibbles(blk, xb, 48, (*[32]byte)(blk[16:48]))
}

// noFifthBits are Q4_K's fifth bits: none, so its codes are Q5_K's with qh all zero.
var noFifthBits [32]byte

// sumsNibbles is sumsQ4_K and sumsQ5_K: the nibbles start at byte qsAt of blk, and bit
// 2·(j/2) + j%2 of qh[l] is the fifth bit of element l of sub-block j.
func sumsNibbles(blk, xb []byte, qsAt int, qh *[32]byte) (I, M int32) {
	xq := q8KCodes(xb)
	var p [8]int32
	for c := range 4 {
		qs := blk[qsAt+32*c : qsAt+32*c+32 : qsAt+32*c+32]
		lo, hi := xq[64*c:64*c+32:64*c+32], xq[64*c+32:64*c+64:64*c+64]
		var pl, ph int32
		for l, q := range qs {
			h := qh[l] >> (2 * c)
			pl += int32(q&0x0f|(h&1)<<4) * int32(int8(lo[l]))
			ph += int32(q>>4|(h>>1&1)<<4) * int32(int8(hi[l]))
		}
		p[2*c], p[2*c+1] = pl, ph
	}
	return sumsScaleMins32(&p, blk[4:16], xb)
}

// sums16 finishes a super-block with a coefficient per 16 values: I = Σ sc_j·p_j and
// M = Σ mn_j·bsum_j.
func sums16(p *[16]int32, sc, mn *[16]int32, xb []byte) (I, M int32) {
	for j := range 16 {
		I += sc[j] * p[j]
		M += mn[j] * q8KSum(xb, j)
	}
	return I, M
}

// sumsQ6_K: in half h, the codes of quarters k = 0..3 (values 128h+32k+l) are the low or
// high nibble of ql[64h + 32·(k%2) + l] with bits 2k..2k+1 of qh[32h+l] above them.
func sumsQ6_K(blk, xb []byte) (I, M int32) {
	xq := q8KCodes(xb)
	var p, sc [16]int32
	for h := range 2 {
		ql := blk[64*h : 64*h+64 : 64*h+64]
		qh := blk[128+32*h : 128+32*h+32 : 128+32*h+32]
		x := xq[128*h : 128*h+128 : 128*h+128]
		for l := range 32 {
			b0, b1, bh := ql[l], ql[32+l], qh[l]
			j := 8*h + l/16
			p[j] += int32(b0&0x0f|(bh&3)<<4) * int32(int8(x[l]))
			p[j+2] += int32(b1&0x0f|(bh>>2&3)<<4) * int32(int8(x[32+l]))
			p[j+4] += int32(b0>>4|(bh>>4&3)<<4) * int32(int8(x[64+l]))
			p[j+6] += int32(b1>>4|(bh>>6)<<4) * int32(int8(x[96+l]))
		}
	}
	for j := range sc {
		sc[j] = int32(int8(blk[192+j]))
	}
	return sums16(&p, &sc, &sc, xb)
}

// sumsQ2_K: in half h, quarter k's codes are bits 2k..2k+1 of qs[32h+l] (bytes 16-79);
// scales[j] holds sub-block j's scale and min nibbles.
func sumsQ2_K(blk, xb []byte) (I, M int32) {
	xq := q8KCodes(xb)
	var p, sc, mn [16]int32
	for h := range 2 {
		qs := blk[16+32*h : 16+32*h+32 : 16+32*h+32]
		x := xq[128*h : 128*h+128 : 128*h+128]
		for l, q := range qs {
			j := 8*h + l/16
			p[j] += int32(q&3) * int32(int8(x[l]))
			p[j+2] += int32(q>>2&3) * int32(int8(x[32+l]))
			p[j+4] += int32(q>>4&3) * int32(int8(x[64+l]))
			p[j+6] += int32(q>>6) * int32(int8(x[96+l]))
		}
	}
	for j := range 16 {
		sc[j], mn[j] = int32(blk[j]&0x0f), int32(blk[j]>>4)
	}
	return sums16(&p, &sc, &mn, xb)
}

// sumsQ3_K: Q2_K's 2-bit codes (bytes 32-95) plus 4 for bit 4h+k of hmask[l], the sixteen
// 6-bit scales less 32.
func sumsQ3_K(blk, xb []byte) (I, M int32) {
	xq := q8KCodes(xb)
	hm := blk[0:32:32]
	var p, sc [16]int32
	for h := range 2 {
		qs := blk[32+32*h : 32+32*h+32 : 32+32*h+32]
		x := xq[128*h : 128*h+128 : 128*h+128]
		for l, q := range qs {
			j := 8*h + l/16
			m := hm[l] >> (4 * h)
			p[j] += int32(q&3|(m&1)<<2) * int32(int8(x[l]))
			p[j+2] += int32(q>>2&3|(m>>1&1)<<2) * int32(int8(x[32+l]))
			p[j+4] += int32(q>>4&3|(m>>2&1)<<2) * int32(int8(x[64+l]))
			p[j+6] += int32(q>>6|(m>>3&1)<<2) * int32(int8(x[96+l]))
		}
	}
	s := blk[96:108:108]
	for j := range 16 {
		var low uint8
		if j < 8 {
			low = s[j] & 0x0f
		} else {
			low = s[j-8] >> 4
		}
		sc[j] = int32(low|(s[8+j%4]>>(2*(j/4))&3)<<4) - 32
	}
	return sums16(&p, &sc, &sc, xb)
}
