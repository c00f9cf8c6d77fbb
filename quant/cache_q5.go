package quant

import "encoding/binary"

// The q5_0 and q5_1 cache types are ggml's block_q5_0 and block_q5_1 (layouts in
// cache_block.go): 5-bit codes whose low four bits are stored as nibbles, as in q4_0 and
// q4_1, and whose fifth bits are gathered in a little-endian uint32 qh, bit j for element j.
//
// q5_0 is ggml's quantize_row_q5_0_ref, q4_0's method on a 32-step grid: max is the value
// of largest magnitude (the first one, on ties), d = max/−16 and id = d != 0 ? 1/d : 0, and
// element x gets c = min(31, (int8)(x·id + 16.5)), so that max itself is c = 0, i.e.
// −16·d, and the grid −16d..15d is lopsided like q4_0's.
//
// q5_1 is ggml's quantize_row_q5_1_ref, q4_1's method with d = (max−min)/31 and
// c = (uint8)((x−min)·id + 0.5), without q4_1's clamp (the code cannot exceed 31 for
// finite inputs; ggml keeps the low five bits either way).

const (
	q5Offset   = 16            // the stored q5_0 code is value/d + 16
	q5MaxCode  = 31            // largest 5-bit code
	q5HalfStep = float32(16.5) // q5Offset + 1/2, added before truncation
	q5NegMax   = float32(-16)  // max/−16 maps the extreme value to code 0
)

// packQ5 stores the 32 five-bit codes c of one block: their low nibbles into qs (element
// j low, element 16+j high) and their fifth bits into the little-endian uint32 qh.
func packQ5(qh, qs []byte, c *[blockLen]uint8) {
	var h uint32
	qs = qs[:blockHalf]
	for j := range qs {
		c0, c1 := c[j], c[blockHalf+j]
		qs[j] = c0&0x0f | (c1&0x0f)<<4
		h |= uint32(c0&0x10) >> 4 << uint(j)
		h |= uint32(c1&0x10) >> 4 << uint(j+blockHalf)
	}
	binary.LittleEndian.PutUint32(qh, h)
}

func encodeQ5_0(dst []byte, src []float32) {
	var c [blockLen]uint8
	for blk := 0; blk*blockLen < len(src); blk++ {
		x := src[blk*blockLen : (blk+1)*blockLen]
		out := dst[blk*q5_0BlockBytes : (blk+1)*q5_0BlockBytes]
		id := symmetricHeader(out, x, q5NegMax)
		for j, v := range x {
			c[j] = uint8(min(q5MaxCode, int8(truncToInt32(float32(v*id)+q5HalfStep))))
		}
		packQ5(out[2:6], out[6:q5_0BlockBytes], &c)
	}
}

func encodeQ5_1(dst []byte, src []float32) {
	var c [blockLen]uint8
	for blk := 0; blk*blockLen < len(src); blk++ {
		x := src[blk*blockLen : (blk+1)*blockLen]
		out := dst[blk*q5_1BlockBytes : (blk+1)*q5_1BlockBytes]
		lo, id := affineHeader(out, x, q5MaxCode)
		for j, v := range x {
			c[j] = uint8(affineCode(v, lo, id))
		}
		packQ5(out[4:8], out[8:q5_1BlockBytes], &c)
	}
}
