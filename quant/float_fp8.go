package quant

import "math"

// The two OCP 8-bit floating-point formats (OCP 8-bit Floating Point Specification,
// OFP8, revision 1.0), both with a sign bit, subnormals and ±0:
//
//	E4M3: S.EEEE.MMM, bias 7, no infinities, S.1111.111 is NaN (the only NaN),
//	      largest finite S.1111.110 = ±448, smallest subnormal 2^-9.
//	E5M2: S.EEEEE.MM, bias 15, IEEE-like: S.11111.00 is ±Inf, S.11111.{01,10,11} NaN,
//	      largest finite S.11110.11 = ±57344, smallest subnormal 2^-16.
//
// E5M2 is exactly the top byte of an IEEE half, which is why it keeps infinities.
//
// Conversions to FP8 round to nearest, ties to even, and always saturate (the spec's
// "saturation mode"): a finite value beyond the largest finite FP8 value becomes that
// value with its sign. For E5M2 this kvref also maps ±Inf to ±57344 instead of keeping
// Inf: a K/V cache entry that is infinite poisons every attention score that reads it, and
// a saturated one does not. A NaN input becomes the NaN code S.1111111 (0x7F or 0xFF), in
// both formats.

const (
	// FP8E4M3Max is the largest finite OCP E4M3 value.
	FP8E4M3Max = 448
	// FP8E5M2Max is the largest finite OCP E5M2 value.
	FP8E5M2Max = 57344
)

// fp8Format describes one FP8 format: mantissa bits, exponent bias and the code of the
// largest finite positive value.
type fp8Format struct {
	mantBits uint32
	bias     uint32
	maxCode  uint32
}

var (
	e4m3 = fp8Format{mantBits: 3, bias: 7, maxCode: 0x7e}
	e5m2 = fp8Format{mantBits: 2, bias: 15, maxCode: 0x7b}
)

// decode returns the value of code b, computed from its bit fields.
func (f fp8Format) decode(b uint8) float32 {
	sign := uint32(b&0x80) << 24
	mag := uint32(b & 0x7f)
	if mag > f.maxCode { // above the largest finite code: NaN, or Inf for E5M2
		if f == e5m2 && mag == 0x7c {
			return math.Float32frombits(sign | 0x7f800000)
		}
		return math.Float32frombits(sign | 0x7fc00000)
	}
	exp := mag >> f.mantBits
	mant := mag & (1<<f.mantBits - 1)
	if exp == 0 { // ±0 or subnormal: mant·2^(1-bias-mantBits), exact in float32
		v := float32(mant) * math.Float32frombits((127+1-f.bias-f.mantBits)<<23)
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+127-f.bias)<<23 | mant<<(23-f.mantBits))
}

// encode converts x to the nearest code of the format, ties to even, saturating to the
// largest finite value (also for ±Inf); NaN becomes 0x7F with x's sign.
func (f fp8Format) encode(x float32) uint8 {
	b := math.Float32bits(x)
	sign := uint8(b>>24) & 0x80
	a := b &^ 0x80000000
	if a > 0x7f800000 {
		return sign | 0x7f
	}
	var code uint32
	if a >= (127+1-f.bias)<<23 { // |x| >= smallest normal
		// Round the mantissa to mantBits, ties to even, then rebias. An exponent
		// carry is the right answer; anything above maxCode (including Inf) saturates.
		shift := 23 - f.mantBits
		a += 1<<(shift-1) - 1 + (a>>shift)&1
		code = a>>shift - (127-f.bias)<<f.mantBits
	} else {
		// Subnormal range: |x| = k·2^(1-bias-mantBits) with k = RNE(|x|·2^(bias-1+mantBits)).
		// The scaling by a power of two is exact; k == 1<<mantBits is the smallest normal.
		scaled := math.Float32frombits(a) * math.Float32frombits((127+f.bias-1+f.mantBits)<<23)
		code = uint32(math.RoundToEven(float64(scaled)))
	}
	return sign | uint8(min(code, f.maxCode))
}

// The decode tables hold every code's value; the cache kernels index them directly.
var (
	e4m3Table = fp8Table(e4m3)
	e5m2Table = fp8Table(e5m2)
)

func fp8Table(f fp8Format) *[256]float32 {
	var t [256]float32
	for b := range t {
		t[b] = f.decode(uint8(b))
	}
	return &t
}

// FP8E4M3ToF32 returns the value of an OCP E4M3 (the "FN" variant) code: exact for every
// finite code, NaN (quiet, with the code's sign) for 0x7F and 0xFF.
func FP8E4M3ToF32(b uint8) float32 { return e4m3Table[b] }

// F32ToFP8E4M3 converts f to the nearest OCP E4M3 code, ties to even. It saturates:
// |f| > 448 (and ±Inf) becomes ±448 (0x7E or 0xFE). NaN becomes 0x7F or 0xFF.
func F32ToFP8E4M3(f float32) uint8 { return e4m3.encode(f) }

// FP8E5M2ToF32 returns the value of an OCP E5M2 code: exact for every finite code, ±Inf
// for 0x7C and 0xFC, NaN (quiet, with the code's sign) for the other codes with exponent
// 11111.
func FP8E5M2ToF32(b uint8) float32 { return e5m2Table[b] }

// F32ToFP8E5M2 converts f to the nearest OCP E5M2 code, ties to even. It saturates:
// finite values beyond ±57344 and ±Inf become ±57344 (0x7B or 0xFB), so it never
// produces an infinity code. NaN becomes 0x7F or 0xFF.
func F32ToFP8E5M2(f float32) uint8 { return e5m2.encode(f) }
