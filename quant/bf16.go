package quant

import "math"

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
