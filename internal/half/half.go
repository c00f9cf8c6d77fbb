// Package half converts between float32 and the two 16-bit floating-point formats kvref
// stores: IEEE 754 binary16 ("half", f16) and bfloat16 (bf16). It is the one home of these
// conversions, at the bottom of the import graph: the cache codecs (quant), the weight
// matrices (model) and the portable twins of the SIMD kernels (internal/kernels) all use it,
// so every path agrees on every bit, NaN payloads included.
package half

import "math"

// F16ToF32 converts an IEEE 754 binary16 ("half") bit pattern to float32. The conversion
// is exact for every finite value and for ±Inf. A NaN stays a NaN with the same sign and
// payload, with the quiet bit set (the same bits github.com/x448/float16 produces).
//
// This is the readable bit-field version; inner loops use the equivalent 65536-entry
// table F16Table, which the tests check against this function.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0x1f: // Inf or NaN
		if mant == 0 {
			return math.Float32frombits(sign | 0x7f800000)
		}
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case 0: // ±0 or subnormal: the value is mant·2^-24, exact in float32
		v := float32(mant) * 0x1p-24
		return math.Float32frombits(sign | math.Float32bits(v))
	default: // normal: rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// F32ToF16 converts a float32 to the nearest IEEE 754 binary16 bit pattern, rounding
// ties to even. Values whose magnitude rounds beyond 65504 (that is, |f| >= 65520)
// become ±Inf, as IEEE 754 requires; subnormal halves are produced with correct rounding;
// a NaN stays a NaN with the same sign, the quiet bit set and the top 9 payload bits kept.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	a := b &^ 0x80000000 // |f| as bits
	switch {
	case a > 0x7f800000: // NaN
		return sign | 0x7e00 | uint16(a>>13)&0x3ff
	case a >= 0x477ff000: // |f| >= 65520, the midpoint above 65504: Inf (also for Inf)
		return sign | 0x7c00
	case a >= 0x38800000: // |f| >= 2^-14: a normal half
		// Round the 23-bit mantissa to 10 bits, ties to even: add just under half an
		// ulp, plus one more when the kept part is odd. A carry into the exponent is
		// the correct result (1.111..1 rounds up to the next power of two).
		a += 0x0fff + (a>>13)&1
		return sign | uint16((a-(127-15)<<23)>>13)
	default: // |f| < 2^-14: a subnormal half k·2^-24 with k = RNE(|f|·2^24) in [0, 1024]
		k := math.RoundToEven(float64(math.Float32frombits(a) * 0x1p24))
		return sign | uint16(k) // k == 1024 is exactly the smallest normal, 0x0400
	}
}

// F16Table holds F16ToF32 for every bit pattern. A table lookup inlines into inner loops
// and needs no branches; the table is 256 KiB. Do not modify it.
var F16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = F16ToF32(uint16(h))
	}
	return &t
}()

// BF16ToF32 converts a bfloat16 bit pattern to float32. bfloat16 is the top half of a
// float32 (1 sign, 8 exponent, 7 mantissa bits), so the conversion is the shift b<<16 and
// is exact for every pattern, NaNs included.
func BF16ToF32(b uint16) float32 {
	return math.Float32frombits(uint32(b) << 16)
}

// F32ToBF16 converts a float32 to the nearest bfloat16, rounding ties to even. Finite
// values that round beyond the largest bfloat16 become ±Inf (IEEE overflow). A NaN
// becomes a quiet NaN with the same sign and the top 7 payload bits kept; it never turns
// into Inf, which plain truncation of a NaN with a low payload would.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
