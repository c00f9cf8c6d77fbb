package quant

import "math"

// The q4_1 cache type is ggml's block_q4_1 (layout in cache_block.go). Quantization is
// ggml's quantize_row_q4_1_ref, in float32: min and max are the block's smallest and
// largest values, d = (max−min)/15 and id = d != 0 ? 1/d : 0; the block stores fp16(d) and
// fp16(min), and element x gets the code c = min(15, (int8)((x−min)·id + 0.5)), the C
// conversion truncating toward zero. The codes are computed from the float32 min and d,
// not from their fp16 roundings, exactly as ggml does.

// blockRange returns the smallest and largest value of x as ggml's q4_1 and q5_1
// quantizers find them: starting from +MaxFloat32 and −MaxFloat32, with strict
// comparisons (NaNs are skipped).
func blockRange(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// affineScale returns ggml's d = (hi−lo)/maxCode and id = d != 0 ? 1/d : 0 for an
// unsigned grid with codes 0..maxCode.
func affineScale(lo, hi float32, maxCode int) (d, id float32) {
	d = (hi - lo) / float32(maxCode)
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// affineHeader finds the range and scale of block x for an unsigned grid with codes
// 0..maxCode, stores d and m = lo as fp16 in the first 4 bytes of out (the q4_1 and q5_1
// block header) and returns lo and id for affineCode.
func affineHeader(out []byte, x []float32, maxCode int) (lo, id float32) {
	lo, hi := blockRange(x)
	d, id := affineScale(lo, hi, maxCode)
	storeF16(out, d)
	storeF16(out[2:], lo)
	return lo, id
}

// affineCode is (x−lo)·id + 0.5 truncated toward zero to an integer, as ggml's q4_1 and
// q5_1 quantizers compute a code before narrowing it (its low byte is what C keeps).
func affineCode(x, lo, id float32) int32 {
	return truncToInt32(float32((x-lo)*id) + 0.5)
}

func encodeQ4_1(dst []byte, src []float32) {
	for blk := 0; blk*blockLen < len(src); blk++ {
		x := src[blk*blockLen : (blk+1)*blockLen]
		out := dst[blk*q4_1BlockBytes : (blk+1)*q4_1BlockBytes]
		lo, id := affineHeader(out, x, q4MaxNibble)
		qs := out[4:]
		qs = qs[:blockHalf]
		for j := range qs {
			c0 := uint8(min(q4MaxNibble, int8(affineCode(x[j], lo, id))))
			c1 := uint8(min(q4MaxNibble, int8(affineCode(x[blockHalf+j], lo, id))))
			qs[j] = c0 | c1<<4
		}
	}
}
