package quant

// Q4_0 weights are ggml's block_q4_0: blocks of 32 values, each stored as
//
//	bytes 0-1   d, fp16 little-endian
//	bytes 2-17  qs[0..15]: value j (0..15) is the low nibble of qs[j], value 16+j the
//	            high nibble; a nibble q decodes to (q−8)·d
//
// Quantization is ggml's quantize_row_q4_0_ref, in float32: max is the value of largest
// magnitude (the first one, on ties), d = max/−8 and id = d != 0 ? 1/d : 0, so that max
// itself becomes q = 0, i.e. −8·d; every value becomes q = min(15, (int8)(x·id + 8.5)),
// the C conversion truncating toward zero. The grid −8d..7d is lopsided: a value of the
// other sign than max, close to −max, is clamped to 7·d.

const (
	q4BlockLen   = 32                 // values per block (ggml's QK4_0)
	q4BlockBytes = 2 + q4BlockLen/2   // fp16 d and 16 bytes of nibbles
	q4Half       = q4BlockLen / 2     // values in the low (or high) nibbles of a block
	q4Offset     = 8                  // the stored nibble is q = value/d + 8
	q4MaxNibble  = 15                 // largest nibble
	q4HalfStep   = float32(8.5)       // q4Offset + 1/2, added before truncation
	q4NegMaxStep = float32(-q4Offset) // max/−8 maps the extreme value to nibble 0
)

// quantizeQ4_0 is ggml's quantize_row_q4_0_ref for whole blocks.
func quantizeQ4_0(dst []byte, src []float32) {
	for blk := 0; blk*q4BlockLen < len(src); blk++ {
		x := src[blk*q4BlockLen : (blk+1)*q4BlockLen]
		out := dst[blk*q4BlockBytes : (blk+1)*q4BlockBytes]
		id := symmetricHeader(out, x, q4NegMaxStep)
		qs := out[2:]
		qs = qs[:q4Half]
		for j := range qs {
			qs[j] = q4Nibble(x[j], id) | q4Nibble(x[q4Half+j], id)<<4
		}
	}
}

// symmetricHeader finds the scale of block x as ggml's q4_0 and q5_0 quantizers do,
// d = max/negMax where max is the value of largest magnitude (negMax is −8 or −16, so that
// max lands on code 0), stores d as fp16 in the first 2 bytes of out and returns
// id = d != 0 ? 1/d : 0.
func symmetricHeader(out []byte, x []float32, negMax float32) (id float32) {
	_, xmax := extreme(x)
	d := xmax / negMax
	if d != 0 {
		id = 1 / d
	}
	storeF16(out, d)
	return id
}

// q4Nibble is MIN(15, (int8_t)(x·id + 8.5f)) stored into a uint8_t, as ggml computes a
// Q4_0 nibble. For finite scales the truncated value is 0..16, so the result is 0..15.
func q4Nibble(x, id float32) uint8 {
	q := int8(truncToInt32(float32(x*id) + q4HalfStep))
	return uint8(min(q4MaxNibble, q))
}

// dequantizeQ4_0 is ggml's dequantize_row_q4_0: y = (q−8)·d, the integer q−8 converted to
// float32 and multiplied by the fp16 scale; the q4_0 cache's decoder (groupQ4_0).
func dequantizeQ4_0(dst []float32, src []byte) { decodeBlocks(Q4_0, dst, src) }
