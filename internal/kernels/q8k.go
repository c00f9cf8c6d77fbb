package kernels

import (
	"fmt"
	"math"
)

// KBlockLen is the number of values in a k-quant super-block (ggml's QK_K): Q2_K, Q3_K,
// Q4_K, Q5_K and Q6_K weights, and the Q8_K input they are multiplied by.
const KBlockLen = 256

// kSubLen16 is the number of values a Q8_K block sum (bsums) covers.
const kSubLen16 = 16

// Q8KInput is a float32 vector quantized to ggml's Q8_K super-blocks, the form in which the
// k-quant weight types (Q2_K to Q6_K) take their input: ggml multiplies such a matrix by a
// vector by first quantizing the vector to Q8_K (the types' vec_dot_type), then dotting the
// weights' small integers with the input's int8 values, one float multiply per super-block
// of 256 (see DotQ4_KRows). kvref does the same.
//
// Quantize is ggml's quantize_row_q8_K, which on x86 is quantize_row_q8_K_ref, per
// super-block of 256 values, in float32:
//
//	max = the value of largest magnitude (the first one on ties; NaNs are passed over)
//	if max == 0: d = 0, q = 0
//	iscale = −127/max;  q = (int8) min(127, nearest_int(iscale·x));  d = 1/iscale
//	bsums[j] = Σ q over values 16j..16j+15
//
// nearest_int is ggml's: x + 1.5·2^23 read as bits, which rounds half to even for
// |x| < 2^22 and gives what a release build of ggml gives otherwise (for a NaN value, the
// low mantissa bits of the NaN: 0 for the default NaN, so a NaN input value becomes an
// arbitrary code, as in ggml). An infinite value makes iscale ∓0 and d ∓Inf, so every
// product with the super-block is NaN. The (int8) conversion keeps the low byte, as C
// compilers for x86-64 do. Unlike ggml, a zero super-block gets zero block sums (ggml leaves
// them unset; every product multiplies them by d = 0).
//
// Each super-block is stored as ggml's block_q8_K holds it, padded to five cache lines for
// the assembly: the 256 int8 codes, the 16 int16 block sums (little-endian), the float32
// scale. A Q8KInput is reused across vectors of any length: Quantize resizes it.
type Q8KInput struct {
	n      int
	blocks []byte // q8KStride bytes per super-block
}

// The layout of one stored Q8_K super-block.
const (
	q8KSumsOffset = KBlockLen                             // int16 bsums[16]
	q8KDOffset    = q8KSumsOffset + 2*KBlockLen/kSubLen16 // float32 d
	q8KStride     = 320                                   // bytes per super-block, a multiple of 64
)

// Len is the length of the quantized vector.
func (v *Q8KInput) Len() int { return v.n }

// Quantize sets v to x quantized to Q8_K super-blocks. It panics if len(x) is not a
// multiple of 256.
func (v *Q8KInput) Quantize(x []float32) {
	if len(x)%KBlockLen != 0 {
		panic(fmt.Sprintf("kernels: Q8KInput.Quantize: a vector of %d values is not a whole number of %d-value super-blocks", len(x), KBlockLen))
	}
	v.n = len(x)
	v.blocks = grow(v.blocks, len(x)/KBlockLen*q8KStride)
	quantizeQ8K(v, x)
}

// block returns super-block b's codes, sums and scale.
func (v *Q8KInput) block(b int) []byte {
	return v.blocks[b*q8KStride : b*q8KStride+q8KDOffset+4 : b*q8KStride+q8KDOffset+4]
}

// q8KSum returns block sum j (of values 16j..16j+15) of a stored super-block.
func q8KSum(blk []byte, j int) int32 { return int32(int16(le16(blk[q8KSumsOffset+2*j:]))) }

// q8KScale returns the float32 scale d of a stored super-block.
func q8KScale(blk []byte) float32 { return math.Float32frombits(le32(blk[q8KDOffset:])) }

// ggmlNearestInt is ggml's nearest_int: f + 1.5·2^23 read as bits, the low 23 bits less
// 2^22. It rounds half to even for |f| < 2^22; for larger values, infinities and NaNs it
// returns what a release build of ggml returns (its range assertion compiled out).
func ggmlNearestInt(f float32) int32 {
	return int32(math.Float32bits(f+roundMagic)&0x007fffff) - 0x00400000
}
