package quant

// Q8_0 weights are ggml's block_q8_0, the same bytes as the q8_0 cache type: blocks of 32
// values, each stored as
//
//	bytes 0-1   d, fp16 little-endian
//	bytes 2-33  q[0..31], int8; value j is q[j]·d
//
// Quantization is ggml's quantize_row_q8_0_ref, in float32:
//
//	amax = max |x|;  d = amax/127;  id = d != 0 ? 1/d : 0;  q = (int8) roundf(x·id)
//
// It differs from the cache codec (cache_q8_0.go) only where C is undefined: when 1/d
// overflows (amax below about 4e-37, so that the stored fp16 d is 0 anyway) x·id is
// infinite or NaN, and the weights follow x86-64's conversion (q = 0) where the cache
// clamps to ±127. Both decode such a block to zeros.

const (
	q8WeightBlockLen   = 32                   // values per block (ggml's QK8_0)
	q8WeightBlockBytes = 2 + q8WeightBlockLen // fp16 d and 32 int8 values
)

// quantizeQ8_0Weights is ggml's quantize_row_q8_0_ref for whole blocks.
func quantizeQ8_0Weights(dst []byte, src []float32) {
	for blk := 0; blk*q8WeightBlockLen < len(src); blk++ {
		x := src[blk*q8WeightBlockLen : (blk+1)*q8WeightBlockLen]
		out := dst[blk*q8WeightBlockBytes : (blk+1)*q8WeightBlockBytes]
		var amax float32
		for _, v := range x {
			if a := absf(v); !(amax > a) { // C's MAX(amax, a)
				amax = a
			}
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		storeF16(out, d)
		qs := out[2:]
		qs = qs[:len(x)]
		for j, v := range x {
			qs[j] = uint8(truncToInt32(roundAway(v * id)))
		}
	}
}

// dequantizeQ8_0Weights is ggml's dequantize_row_q8_0: y = q·d, the q8_0 cache's decoder.
func dequantizeQ8_0Weights(dst []float32, src []byte) { decodeQ8Range(dst, src, 0) }
