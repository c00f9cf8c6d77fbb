package oracle

import "math"

// The element bounds of quant's documentation, "Error bounds", computed from the exact
// values: for an exact x and its stored value x̂, |x̂ − x| <= bound. m is the maxabs of x's
// head (int8, fp8-e4m3) or 32-value block (q8_0) in the exact row, never the stored scale.

var (
	slack32 = math.Ldexp(1, -20) // the float32 roundings of a quotient, a scale and a product, relative to m
	tiny32  = math.Ldexp(1, -140)
)

func boundF32(dst []float64, x []float32, kvHeads, headDim int) { clear(dst) }

// boundF16: round to nearest even, 11 significant bits: half an ulp is at most 2^-11·|x|
// for normal |x| (>= 2^-14), 2^-25 below; from 65520 on, IEEE rounding gives ±Inf.
func boundF16(dst []float64, x []float32, kvHeads, headDim int) {
	for i, v := range x {
		a := math.Abs(float64(v))
		switch {
		case a >= 65520:
			dst[i] = math.Inf(1)
		case a >= math.Ldexp(1, -14):
			dst[i] = math.Ldexp(a, -11)
		default:
			dst[i] = math.Ldexp(1, -25)
		}
	}
}

// boundBF16: 8 significant bits: 2^-8·|x| for normal |x|, 2^-134 for subnormal |x|; values
// that round beyond the largest bfloat16 become ±Inf.
func boundBF16(dst []float64, x []float32, kvHeads, headDim int) {
	const maxBF16 = 0x1.fcp127 // (2 − 2^-7)·2^127
	for i, v := range x {
		a := math.Abs(float64(v))
		switch {
		case a >= maxBF16+math.Ldexp(1, 127-8): // halfway to the next power: rounds to Inf
			dst[i] = math.Inf(1)
		case a >= math.Ldexp(1, -126):
			dst[i] = math.Ldexp(a, -8)
		default:
			dst[i] = math.Ldexp(1, -134)
		}
	}
}

// boundE5M2: OCP E5M2 has 3 significant bits: 2^-3·|x| for 2^-14 <= |x| <= 57344, 2^-17
// below; kvref saturates larger values to ±57344.
func boundE5M2(dst []float64, x []float32, kvHeads, headDim int) {
	for i, v := range x {
		a := math.Abs(float64(v))
		switch {
		case a > 57344:
			dst[i] = a - 57344
		case a >= math.Ldexp(1, -14):
			dst[i] = math.Ldexp(a, -3)
		default:
			dst[i] = math.Ldexp(1, -17)
		}
	}
}

// headMaxAbs is the largest |x| of head h.
func headMaxAbs(x []float32, h, headDim int) float64 {
	m := 0.0
	for _, v := range x[h*headDim : (h+1)*headDim] {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}

// boundInt8: per head s = m/127 (in float32) and q = round(x/s): half a step, s/2, plus the
// float32 roundings.
func boundInt8(dst []float64, x []float32, kvHeads, headDim int) {
	for h := range kvHeads {
		m := headMaxAbs(x, h, headDim)
		s := float64(float32(m / 127))
		for i := h * headDim; i < (h+1)*headDim; i++ {
			dst[i] = s/2 + slack32*m + tiny32
		}
	}
}

// boundE4M3Scaled: per head s = m/448 (in float32), each value E4M3(x/s)·s: half an E4M3 ulp
// of the quotient r = x/s (3 mantissa bits: 2^(⌊log2|r|⌋−4) for |r| >= 2^-6, the subnormal
// step's half 2^-10 below), times s, plus the float32 roundings.
func boundE4M3Scaled(dst []float64, x []float32, kvHeads, headDim int) {
	for h := range kvHeads {
		m := headMaxAbs(x, h, headDim)
		s := float64(float32(m / 448))
		for i := h * headDim; i < (h+1)*headDim; i++ {
			u := math.Ldexp(1, -10)
			if s > 0 {
				if r := math.Abs(float64(x[i]) / s); r >= math.Ldexp(1, -6) {
					_, e := math.Frexp(r) // r = f·2^e, f in [0.5, 1): ⌊log2 r⌋ = e−1
					u = math.Ldexp(1, e-1-4)
				}
			}
			dst[i] = s*u + slack32*m + tiny32
		}
	}
}

// boundQ8_0: per block of 32, d = m/127 (float32) stored as a half: half a step, d/2, plus
// up to 127 steps of the half's rounding of d, plus the float32 roundings; a d from 65520 on
// is an infinite half (the block decodes to ±Inf and NaN, as in llama.cpp).
func boundQ8_0(dst []float64, x []float32, kvHeads, headDim int) {
	for blk := 0; blk*32 < len(x); blk++ {
		m := 0.0
		for _, v := range x[blk*32 : (blk+1)*32] {
			m = math.Max(m, math.Abs(float64(v)))
		}
		d := float64(float32(m / 127))
		b := d/2 + 127*math.Max(math.Ldexp(d, -11), math.Ldexp(1, -25)) + slack32*m + tiny32
		if d >= 65520 {
			b = math.Inf(1)
		}
		for i := blk * 32; i < (blk+1)*32; i++ {
			dst[i] = b
		}
	}
}
