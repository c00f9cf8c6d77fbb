package quant

import (
	"encoding/binary"
)

// The q4_0, q4_1, iq4_nl, q5_0 and q5_1 cache types are ggml's block formats of the same
// names, byte for byte, so that a kvref cache can be compared with llama.cpp's
// --cache-type-k/--cache-type-v of that name. Like q8_0, the row is cut into blocks of 32
// consecutive values that run across heads (a block spans 32/headDim heads when
// headDim < 32; llama.cpp itself refuses such models, asserting that the block size
// divides head_dim, so there these types are kvref's own), and each block is stored on its
// own (all fields little-endian):
//
//	type    bytes  layout                  value of element j (code c)
//	q4_0    18     d · qs[16]              (c−8)·d
//	q4_1    20     d · m · qs[16]          c·d + m
//	iq4_nl  18     d · qs[16]              d·kvalues[c]
//	q5_0    22     d · qh[4] · qs[16]      (c−16)·d
//	q5_1    24     d · m · qh[4] · qs[16]  c·d + m
//
// d and m are fp16. qs[j] holds the low four bits of element j's code in its low nibble
// and those of element 16+j in its high nibble; for the 5-bit types qh is a uint32 whose
// bit j is the fifth bit of element j's code. kvalues is ggml's kvalues_iq4nl (see
// cache_iq4_nl.go). Decoding follows ggml's dequantize_row_*, every operation rounded to
// float32 on its own: the integer c−8 or c−16 converted and multiplied by d; c converted,
// multiplied by d, then m added (two roundings, as ggml-base is compiled without FMA);
// d times the grid value.
//
// Encoding is what llama.cpp's CPU backend writes when it copies a row into a cache of
// that type (ggml_cpy through the type's from_float): quantize_row_q4_0, _q4_1, _q5_0 and
// _q5_1, which on every architecture call the reference quantizers quantize_row_*_ref
// (unlike q8_0, whose x86 from_float is a SIMD routine), and quantize_row_iq4_nl, which
// calls quantize_row_iq4_nl_ref. The q4_0 cache shares its quantizer with the q4_0
// weights (quantizeQ4_0); the others are in cache_q4_1.go, cache_q5.go and
// cache_iq4_nl.go.
//
// Decode, DotHead and AxpyHead decode eight values at a time with the type's group
// decoder (blockDecoder).

const (
	q4_1BlockBytes  = 2 + 2 + blockLen/2     // fp16 d, fp16 m, 16 bytes of nibbles
	q5_0BlockBytes  = 2 + 4 + blockLen/2     // fp16 d, qh, 16 bytes of nibbles
	q5_1BlockBytes  = 2 + 2 + 4 + blockLen/2 // fp16 d, fp16 m, qh, 16 bytes of nibbles
	iq4nlBlockBytes = 2 + blockLen/2         // fp16 d, 16 bytes of nibbles
	blockHalf       = blockLen / 2           // values in the low (or high) nibbles of a block
)

// nibbles8 returns the eight bytes of qs (a block's 16 bytes of nibbles) that hold elements
// o..o+7 (o a multiple of 8), and the shift that brings their nibble down: elements 0..15
// are the low nibbles of qs[0..15], elements 16..31 the high ones.
func nibbles8(qs []byte, o int) ([]byte, uint) {
	b := o % blockHalf
	return qs[b : b+8 : b+8], uint(o / blockHalf * 4)
}

// fifthBits8 returns bits o..o+7 of the little-endian uint32 qh (a 5-bit block's fifth
// bits), bit j of the result for element o+j.
func fifthBits8(qh []byte, o int) uint32 {
	return binary.LittleEndian.Uint32(qh) >> uint(o)
}

// Codes as float32, exactly (every code converts without rounding): q4Levels[c] = c−8
// (q4_0), q5Levels[c] = c−16 (q5_0), codeLevels[c] = c (q4_1, q5_1), iq4nlLevels[c] =
// kvalues[c]. A table lookup gives the same bits as ggml's integer-to-float conversion.
var q4Levels, q5Levels, codeLevels, iq4nlLevels = func() (a, b, c, d [blockLen]float32) {
	for i := range a {
		a[i], b[i], c[i] = float32(i-q4Offset), float32(i-q5Offset), float32(i)
		d[i] = float32(iq4nlValues[i%iq4nlPoints])
	}
	return
}()

// The group decoders: each decodes elements o..o+7 (o a multiple of 8) of one block blk
// into v, with the float32 arithmetic of ggml's dequantize_row_*: a code's integer value
// times d (q4_0, q5_0, iq4_nl), or times d plus m, rounded twice (q4_1, q5_1). Decode,
// DotHead and AxpyHead all decode through them (blockDecoder).

func groupQ4_0(blk []byte, o int, v *[8]float32) { groupLevels(&q4Levels, blk, o, v) }

func groupIQ4NL(blk []byte, o int, v *[8]float32) { groupLevels(&iq4nlLevels, blk, o, v) }

// groupLevels is q4_0's and iq4_nl's group: the level of each 4-bit code times d.
func groupLevels(lv *[blockLen]float32, blk []byte, o int, v *[8]float32) {
	d := loadF16(blk)
	qs, sh := nibbles8(blk[2:q4BlockBytes], o)
	v[0], v[1], v[2], v[3] = lv[qs[0]>>sh&0x0f]*d, lv[qs[1]>>sh&0x0f]*d, lv[qs[2]>>sh&0x0f]*d, lv[qs[3]>>sh&0x0f]*d
	v[4], v[5], v[6], v[7] = lv[qs[4]>>sh&0x0f]*d, lv[qs[5]>>sh&0x0f]*d, lv[qs[6]>>sh&0x0f]*d, lv[qs[7]>>sh&0x0f]*d
}

func groupQ4_1(blk []byte, o int, v *[8]float32) {
	d, m := loadF16(blk), loadF16(blk[2:])
	qs, sh := nibbles8(blk[4:q4_1BlockBytes], o)
	v[0], v[1], v[2], v[3] = affine(qs[0]>>sh&0x0f, d, m), affine(qs[1]>>sh&0x0f, d, m), affine(qs[2]>>sh&0x0f, d, m), affine(qs[3]>>sh&0x0f, d, m)
	v[4], v[5], v[6], v[7] = affine(qs[4]>>sh&0x0f, d, m), affine(qs[5]>>sh&0x0f, d, m), affine(qs[6]>>sh&0x0f, d, m), affine(qs[7]>>sh&0x0f, d, m)
}

func groupQ5_0(blk []byte, o int, v *[8]float32) {
	d := loadF16(blk)
	qs, sh := nibbles8(blk[6:q5_0BlockBytes], o)
	h := fifthBits8(blk[2:6], o)
	lv := &q5Levels
	v[0], v[1], v[2], v[3] = lv[code5(qs[0]>>sh, h, 0)]*d, lv[code5(qs[1]>>sh, h, 1)]*d, lv[code5(qs[2]>>sh, h, 2)]*d, lv[code5(qs[3]>>sh, h, 3)]*d
	v[4], v[5], v[6], v[7] = lv[code5(qs[4]>>sh, h, 4)]*d, lv[code5(qs[5]>>sh, h, 5)]*d, lv[code5(qs[6]>>sh, h, 6)]*d, lv[code5(qs[7]>>sh, h, 7)]*d
}

func groupQ5_1(blk []byte, o int, v *[8]float32) {
	d, m := loadF16(blk), loadF16(blk[2:])
	qs, sh := nibbles8(blk[8:q5_1BlockBytes], o)
	h := fifthBits8(blk[4:8], o)
	v[0], v[1], v[2], v[3] = affine(code5(qs[0]>>sh, h, 0), d, m), affine(code5(qs[1]>>sh, h, 1), d, m), affine(code5(qs[2]>>sh, h, 2), d, m), affine(code5(qs[3]>>sh, h, 3), d, m)
	v[4], v[5], v[6], v[7] = affine(code5(qs[4]>>sh, h, 4), d, m), affine(code5(qs[5]>>sh, h, 5), d, m), affine(code5(qs[6]>>sh, h, 6), d, m), affine(code5(qs[7]>>sh, h, 7), d, m)
}

// code5 is a 5-bit code: the low four bits of b (a nibble shifted down, higher bits
// ignored) and bit j of h as its fifth bit.
func code5(b uint8, h uint32, j uint) uint8 { return b&0x0f | uint8(h>>j&1)<<4 }

// affine is q4_1's and q5_1's value of code c (0..31): c·d + m, the product rounded to
// float32 before the sum, as ggml computes it.
func affine(c uint8, d, m float32) float32 { return float32(codeLevels[c&0x1f]*d) + m }

// blockDecoder returns the decodeRange of a 4- or 5-bit block type whose blocks of bb
// bytes decode group by group: it decodes len(dst) values of a row starting at element
// e0, eight at a time where a group of eight starts on a multiple of 8 (and so lies in one
// half of one block), one at a time elsewhere, the same float32 operations either way.
func blockDecoder(group func(blk []byte, o int, v *[8]float32), bb int) func(dst []float32, row []byte, e0 int) {
	return func(dst []float32, row []byte, e0 int) {
		var v [8]float32
		for i := 0; i < len(dst); {
			e := e0 + i
			o := e % blockLen
			blk := row[e/blockLen*bb : (e/blockLen+1)*bb]
			if o%8 == 0 && i+8 <= len(dst) {
				group(blk, o, (*[8]float32)(dst[i:i+8]))
				i += 8
				continue
			}
			group(blk, o&^7, &v)
			dst[i] = v[o&7]
			i++
		}
	}
}

// decodeBlocks decodes a whole row of the block type t (the legacy weights decode so).
func decodeBlocks(t CacheType, dst []float32, src []byte) { t.format().decodeRange(dst, src, 0) }
