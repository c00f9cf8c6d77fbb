package kernels

import (
	"fmt"
	"math"

	"github.com/kvref/kvref/internal/half"
)

// Q8Input is a float32 vector quantized to Q8_0 blocks, the form in which a Q8_0 weight
// matrix takes its input: ggml multiplies a Q8_0 matrix by a vector by first quantizing the
// vector to Q8_0 (the matrix type's vec_dot_type) and then dotting int8 with int8, one
// float multiply per block, and kvref does the same. The integer products cost a fraction
// of what widening every weight to float32 costs, which is what lets a Q8_0 matrix–vector
// product run at memory bandwidth (see DotQ8_0Q8).
//
// Quantize follows ggml's quantize_row_q8_0 as its x86 build runs it, per block of 32:
//
//	amax = max |x|;  d = fp16(amax/127);  id = amax != 0 ? 127/amax : 0;  q = roundEven(x·id)
//
// in float32 arithmetic, d rounded to the nearest fp16 (ties to even), q rounded half to
// even. A block holding a NaN or an infinity gets d = NaN and q = 0, so every dot product
// with it is NaN (ggml leaves that case to the hardware); a block whose d rounds to 0
// (amax below about 4e-6) gets q = 0, which changes no product. On amd64 with AVX-512
// VNNI the blocks are quantized in assembly (q8input_avx512_amd64.s), the same bytes.
//
// It also holds what ggml's Q8_1 adds to a block, for the weight types with a min (Q4_1,
// Q5_1): s = fp16(float32(amax/127)·Σq), as quantize_row_q8_1 computes it on x86, with the
// q that ggml computes (for a block whose d rounds to 0 too; NaN for a block with a NaN or
// an infinity).
//
// A Q8Input is reused across vectors of any length: Quantize resizes it.
type Q8Input struct {
	n      int
	qs     []int8    // the n quantized values
	d      []float32 // each block's scale: the fp16 d, widened (exactly)
	dLanes []float32 // each block's d eight times, for the assembly
	corr   []int32   // for each four values, −128 times their sum, for the assembly
	sLanes []float32 // each block's Q8_1 sum term, widened from fp16, eight times for the assembly
	amax   []float32 // each block's largest |x|
}

// Len is the length of the quantized vector.
func (v *Q8Input) Len() int { return v.n }

// Quantize sets v to x quantized to Q8_0 blocks. It panics if len(x) is not a multiple
// of 32.
func (v *Q8Input) Quantize(x []float32) {
	if len(x)%QBlockLen != 0 {
		panic(fmt.Sprintf("kernels: Q8Input.Quantize: a vector of %d values is not a whole number of %d-value blocks", len(x), QBlockLen))
	}
	n, nb := len(x), len(x)/QBlockLen
	v.n = n
	v.qs = grow(v.qs, n)
	v.d = grow(v.d, nb)
	v.dLanes = grow(v.dLanes, 8*nb)
	v.corr = grow(v.corr, n/4)
	v.sLanes = grow(v.sLanes, 8*nb)
	v.amax = grow(v.amax, nb)
	quantizeBlocks(v, x)
	q8_1Sums(v, x)
}

// q8_1Sums sets each block's s = fp16(float32(amax/127)·Σq) from the quantized codes (the
// correction terms hold −128 times their sums of four). A block whose d rounded to 0 has
// q = 0 here, so its codes are recomputed as ggml computes them (q = round(x·127/amax),
// half to even), unless 127/amax overflows, where ggml's s rounds to 0 too.
func q8_1Sums(v *Q8Input, x []float32) {
	for b := range v.d {
		var sum int32
		switch d := v.d[b]; {
		case d != d: // a NaN or an infinity in the block
			setLanes(v.sLanes[8*b:8*b+8], d)
			continue
		case d == 0:
			if amax := v.amax[b]; amax != 0 && 127/amax <= math.MaxFloat32 {
				id := 127 / amax
				for _, f := range x[b*QBlockLen : (b+1)*QBlockLen] {
					p := float32(f * id)
					sum += int32((p + roundMagic) - roundMagic)
				}
			}
		default:
			for _, c := range v.corr[8*b : 8*b+8] {
				sum += c
			}
			sum /= -128
		}
		setLanes(v.sLanes[8*b:8*b+8], half.F16ToF32(half.F32ToF16(float32(v.amax[b]/127)*float32(sum))))
	}
}

// setLanes sets every element of lanes to f.
func setLanes(lanes []float32, f float32) {
	for i := range lanes {
		lanes[i] = f
	}
}

// roundMagic is 1.5·2^23: for |v| < 2^22, (v + roundMagic) − roundMagic is v rounded to
// an integer, half to even (the float32 addition does the rounding).
const roundMagic = 0x1.8p23

// grow returns s resized to n elements, reallocating only when its capacity is short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// DotQ8_0Q8 returns the dot product of the quantized vector x with the Q8_0 row stored in
// row[0:x.Len()/32·34], the way ggml's Q8_0 × Q8_0 dot product computes it, in a fixed
// order that both code paths follow exactly. For each block b, with weight scale dw and
// input scale dx (both fp16 values, so s = dw·dx is exact in float32), lane l of the
// block's eight collects the exact integer sum p of the four products wq·xq of values
// 4l..4l+3 (at most 4·128·127 in magnitude, exact in float32), and
//
//	acc[8·(b mod 2) + l] += float32(float32(p)·s)
//
// (a rounded multiply, then a rounded add, never fused), even blocks in lanes 0-7, odd ones
// in lanes 8-15; the result is ReduceLanes(acc[0]+acc[8], ..., acc[7]+acc[15]). It panics
// if row is too short.
func DotQ8_0Q8(x *Q8Input, row []byte) float32 {
	return dotQ8_0Q8Generic(x, row[:x.n/QBlockLen*Q8_0BlockBytes])
}

// DotQ8_0Q8Rows sets out[r] = DotQ8_0Q8(x, w[r·rb:(r+1)·rb]) for every r < len(out), where
// rb = x.Len()/32·34 is the size of a Q8_0 row: w holds len(out) consecutive rows. On
// amd64 CPUs with AVX-512 VNNI it runs the integer products with VPDPBUSD, four rows at a
// time, the same bits. It panics if w is too short.
func DotQ8_0Q8Rows(out []float32, x *Q8Input, w []byte) {
	rb := x.n / QBlockLen * Q8_0BlockBytes
	dotQ8_0Q8Rows(out, x, w[:rowsBytes("DotQ8_0Q8Rows", len(out), rb)], rb)
}
