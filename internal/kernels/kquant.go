package kernels

import "github.com/kvref/kvref/internal/half"

// The k-quant weight rows (ggml's Q2_K, Q3_K, Q4_K, Q5_K and Q6_K) are multiplied by an
// input quantized to Q8_K (Q8KInput), as ggml's CPU backend multiplies them: the weights'
// small integer codes are dotted with the input's int8 values in exact integer arithmetic,
// and each super-block of 256 values then costs a few float operations. The order is
// fixed, so that the portable Go below and the assembly (AVX2 and AVX-512 VNNI) give the
// same bits. For super-block b of a row, with q_e the unsigned code of value e (0..3, 0..7,
// 0..15, 0..31 or 0..63), sc[j] and mn[j] the integer scale and min of the 16 values
// 16j..16j+15 (a Q4_K/Q5_K scale of 32 values serves both of its halves), x_e the input's
// code and bsum[j] its block sums, the super-block's integers are
//
//	I = Σ_e sc[e/16]·q_e·x_e,   M = Σ_j mn[j]·bsum[j]
//
// exact in int32, in whatever order a kernel likes (at most 2^29 in magnitude). The types
// with a min (Q2_K, Q4_K, Q5_K: value = d·sc·q − dmin·mn) contribute
//
//	t_b = float32(float32(float32(I)·d1) − float32(float32(M)·m1))
//	d1 = float32(fp16(d)·xd),  m1 = float32(fp16(dmin)·xd)
//
// and the types with signed codes (Q3_K: value = d·sc·(q − 4), Q6_K: d·sc·(q − 32)) use
// the block sums for the offset o, with mn = sc:
//
//	t_b = float32(float32(I − o·M)·d1)
//
// The result is acc = ((0 + t_0) + t_1) + ..., one float32 add per super-block in order.
// Every operation is a rounded float32 multiply, add or subtract, never fused. (xd is the
// input super-block's float32 scale, fp16(·) a weight's stored half.) A super-block's sum
// being one integer lets a matrix kernel keep one output per SIMD lane: a row against
// sixteen input vectors at once, each lane a vector.

// Bytes per super-block of the k-quant weight types.
const (
	Q2_KBlockBytes = 84  // scales[16] (4-bit scale | 4-bit min << 4) · qs[64] · fp16 d · fp16 dmin
	Q3_KBlockBytes = 110 // hmask[32] · qs[64] · scales[12] (6-bit) · fp16 d
	Q4_KBlockBytes = 144 // fp16 d · fp16 dmin · scales[12] (6-bit scales and mins) · qs[128]
	Q5_KBlockBytes = 176 // fp16 d · fp16 dmin · scales[12] · qh[32] · qs[128]
	Q6_KBlockBytes = 210 // ql[128] · qh[64] · int8 scales[16] · fp16 d
)

// kBlock is one k-quant super-block decoded for the portable dot: every value's unsigned
// code, the integer scale and min of every 16 values, and the two fp16 scales widened.
type kBlock struct {
	q       [KBlockLen]uint8
	sc, mn  [KBlockLen / kSubLen16]int32
	d, dmin float32
	offset  int32 // o of the signed types; 0 for those with a min
}

// kDecoder fills a kBlock from a stored super-block.
type kDecoder func(k *kBlock, blk []byte)

// scaleMinK4 is ggml's get_scale_min_k4: the 6-bit scale and min of sub-block j (0..7)
// of a Q4_K or Q5_K super-block, from its 12 packed bytes s.
func scaleMinK4(s []byte, j int) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0x0f | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// kScaleMins unpacks the eight 6-bit scales and mins of a Q4_K or Q5_K super-block from
// its 12 packed bytes (ggml's get_scale_min_k4) into scales and mins per 16 values.
func kScaleMins(k *kBlock, s []byte) {
	for j := range 8 {
		sc, m := scaleMinK4(s, j)
		k.sc[2*j], k.sc[2*j+1] = int32(sc), int32(sc)
		k.mn[2*j], k.mn[2*j+1] = int32(m), int32(m)
	}
}

// decodeQ2_K: value e has the 2-bit code (qs[32·(e/128) + e%32] >> 2·((e%128)/32)) & 3;
// scales[j] holds the scale (low nibble) and min (high nibble) of values 16j..16j+15.
func decodeQ2_K(k *kBlock, blk []byte) {
	for e := range KBlockLen {
		k.q[e] = blk[16+32*(e/128)+e%32] >> (2 * (e % 128 / 32)) & 3
	}
	for j := range k.sc {
		k.sc[j], k.mn[j] = int32(blk[j]&0x0f), int32(blk[j]>>4)
	}
	k.d, k.dmin, k.offset = half.F16ToF32(le16(blk[80:])), half.F16ToF32(le16(blk[82:])), 0
}

// decodeQ3_K: value e has the low two bits (qs[32·(e/128) + e%32] >> 2·((e%128)/32)) & 3
// and the third bit (hmask[e%32] >> (4·(e/128) + (e%128)/32)) & 1; its value is the code
// less 4. The sixteen 6-bit scales (stored less 32) are unpacked as dequantize_row_q3_K
// does.
func decodeQ3_K(k *kBlock, blk []byte) {
	for e := range KBlockLen {
		j := e % 128 / 32
		lo := blk[32+32*(e/128)+e%32] >> (2 * j) & 3
		hi := blk[e%32] >> (4*(e/128) + j) & 1
		k.q[e] = lo | hi<<2
	}
	s := blk[96:108]
	for j := range k.sc {
		var low, high uint8
		if j < 8 {
			low = s[j] & 0x0f
		} else {
			low = s[j-8] >> 4
		}
		high = s[8+j%4] >> (2 * (j / 4)) & 3
		k.sc[j] = int32(low|high<<4) - 32
	}
	k.mn = k.sc
	k.d, k.dmin, k.offset = half.F16ToF32(le16(blk[108:])), 0, 4
}

// decodeQ4_K: value 32j+l (sub-block j) is the low (j even) or high (j odd) nibble of
// qs[32·(j/2) + l].
func decodeQ4_K(k *kBlock, blk []byte) {
	for e := range KBlockLen {
		j := e / 32
		k.q[e] = blk[16+32*(j/2)+e%32] >> (4 * (j % 2)) & 0x0f
	}
	kScaleMins(k, blk[4:16])
	k.d, k.dmin, k.offset = half.F16ToF32(le16(blk)), half.F16ToF32(le16(blk[2:])), 0
}

// decodeQ5_K: Q4_K's nibble at qs (byte 48 on), plus 16 times bit j of qh[l] for value
// 32j+l.
func decodeQ5_K(k *kBlock, blk []byte) {
	for e := range KBlockLen {
		j, l := e/32, e%32
		k.q[e] = blk[48+32*(j/2)+l]>>(4*(j%2))&0x0f | (blk[16+l]>>j&1)<<4
	}
	kScaleMins(k, blk[4:16])
	k.d, k.dmin, k.offset = half.F16ToF32(le16(blk)), half.F16ToF32(le16(blk[2:])), 0
}

// decodeQ6_K: in half h = e/128, quarter c = (e%128)/32, value e has the nibble of
// ql[64h + 32·(c%2) + e%32] (low for c < 2, high otherwise) and the two bits
// (qh[32h + e%32] >> 2c) & 3 above it; its value is the code less 32, times the int8
// scales[e/16].
func decodeQ6_K(k *kBlock, blk []byte) {
	for e := range KBlockLen {
		h, c, l := e/128, e%128/32, e%32
		lo := blk[64*h+32*(c%2)+l] >> (4 * (c / 2)) & 0x0f
		hi := blk[128+32*h+l] >> (2 * c) & 3
		k.q[e] = lo | hi<<4
	}
	for j := range k.sc {
		k.sc[j] = int32(int8(blk[192+j]))
	}
	k.mn = k.sc
	k.d, k.dmin, k.offset = half.F16ToF32(le16(blk[208:])), 0, 32
}

// kSums returns the integers I and M of one super-block against the input's stored
// super-block xb.
func kSums(k *kBlock, xb []byte) (I, M int32) {
	xq := xb[:KBlockLen:KBlockLen]
	for j := range KBlockLen / kSubLen16 {
		var p int32
		for e := kSubLen16 * j; e < kSubLen16*(j+1); e++ {
			p += int32(k.q[e]) * int32(int8(xq[e]))
		}
		I += k.sc[j] * p
		M += k.mn[j] * q8KSum(xb, j)
	}
	return I, M
}

// kFormat is one k-quant weight type: its name, its super-block size, the readable decoder
// of its layout, the direct computation of its integers (kquant_sums.go), where d (and
// dmin, right after it) are stored, and the offset o of the signed types (0 for those with
// a min).
type kFormat struct {
	name       string
	blockBytes int
	decode     kDecoder
	sums       func(blk, xb []byte) (I, M int32)
	dOffset    int
	offset     int32
}

// The k-quant formats, for the exported row dots.
var (
	kQ2_K = kFormat{"Q2_K", Q2_KBlockBytes, decodeQ2_K, sumsQ2_K, 80, 0}
	kQ3_K = kFormat{"Q3_K", Q3_KBlockBytes, decodeQ3_K, sumsQ3_K, 108, 4}
	kQ4_K = kFormat{"Q4_K", Q4_KBlockBytes, decodeQ4_K, sumsQ4_K, 0, 0}
	kQ5_K = kFormat{"Q5_K", Q5_KBlockBytes, decodeQ5_K, sumsQ5_K, 0, 0}
	kQ6_K = kFormat{"Q6_K", Q6_KBlockBytes, decodeQ6_K, sumsQ6_K, 208, 32}
)

// DotQ2_KRows sets out[r] to the product of x with row r of the Q2_K rows in w, in the
// order the package defines for k-quant rows (see kquant.go): w holds len(out) consecutive
// rows of x.Len()/256 super-blocks. It panics if w is too short.
func DotQ2_KRows(out []float32, x *Q8KInput, w []byte) { dotKRows(&kQ2_K, out, x, w) }

// DotQ3_KRows is DotQ2_KRows for Q3_K rows.
func DotQ3_KRows(out []float32, x *Q8KInput, w []byte) { dotKRows(&kQ3_K, out, x, w) }

// DotQ4_KRows is DotQ2_KRows for Q4_K rows.
func DotQ4_KRows(out []float32, x *Q8KInput, w []byte) { dotKRows(&kQ4_K, out, x, w) }

// DotQ5_KRows is DotQ2_KRows for Q5_K rows.
func DotQ5_KRows(out []float32, x *Q8KInput, w []byte) { dotKRows(&kQ5_K, out, x, w) }

// DotQ6_KRows is DotQ2_KRows for Q6_K rows.
func DotQ6_KRows(out []float32, x *Q8KInput, w []byte) { dotKRows(&kQ6_K, out, x, w) }

// dotKRows checks the sizes and runs the row dots of format f.
func dotKRows(f *kFormat, out []float32, x *Q8KInput, w []byte) {
	if w, rb, ok := quantizedRows(f.name, "Rows", out, w, x.n, KBlockLen, f.blockBytes); ok {
		dotKRowsFast(f, out, x, w, rb)
	}
}
