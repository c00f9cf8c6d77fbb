package kernels

import "math"

// MatMulF16 is MatMulRows for a matrix of IEEE half-precision rows: w holds its rows × cols
// values little-endian, 2·cols bytes a row, and out[b·rows + r] = DotF16(x_b, row r) for
// the rows r in [start, end) and the batch input vectors x_b = x[b·cols:(b+1)·cols]: the
// results of MatMulRows on the widened matrix, bit for bit. The fast path multiplies the
// stored rows directly, four rows against four inputs (AVX-512) or two at a time, each
// group of eight values widened in registers once for them, while the batch is small (the
// rows are then read from memory about once, and widening them into a block of float32
// rows would cost more than the arithmetic); larger batches go through MatMulRowsDecoded
// with the rows widened.
//
// It panics, like MatMulRows, when out, x or w is too short (w's capacity past its length
// is not read).
func MatMulF16(out, x []float32, w []byte, rows, cols, batch, start, end int) {
	matMulHalf(out, x, w[:len(w):len(w)], rows, cols, batch, start, end, &halfF16)
}

// MatMulBF16 is MatMulF16 for a matrix of bfloat16 rows: out[b·rows + r] = DotBF16(x_b,
// row r).
func MatMulBF16(out, x []float32, w []byte, rows, cols, batch, start, end int) {
	matMulHalf(out, x, w[:len(w):len(w)], rows, cols, batch, start, end, &halfBF16)
}

// DecodeBF16 widens the len(dst) bfloat16 values stored little-endian in src to float32
// (exactly: a bfloat16 b is the float32 with bits b<<16). It panics if
// len(src) < 2·len(dst).
func DecodeBF16(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(uint32(le16(src[2*i:])) << 16)
	}
}
