package quant

import (
	"encoding/binary"
	"math"
)

// scaleBytes is the size of the float32 scale stored in front of each head by the int8
// and fp8-e4m3 cache types.
const scaleBytes = 4

// maxAbs returns the largest |v| in x (NaNs are skipped; 0 for an empty or all-zero x).
func maxAbs(x []float32) float32 {
	var m float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	return m
}

// extreme returns the largest |v| in x and the value v it belongs to, the first of
// equal magnitudes, as ggml's quantizers find a block's amax and max: strict comparisons
// from zero, so NaNs are skipped and an all-zero x gives 0, 0.
func extreme(x []float32) (amax, v float32) {
	for _, e := range x {
		if a := absf(e); a > amax {
			amax, v = a, e
		}
	}
	return amax, v
}

// headScale returns the scale m/qmax of a head whose largest magnitude is m, for a grid
// whose largest code is qmax (127 for int8, 448 for E4M3). When m is so close to
// math.MaxFloat32 that qmax·(m/qmax) rounds to +Inf, the scale is lowered by one ulp, so
// that every decoded value qmax·s and below stays finite; the head's largest values then
// clamp to qmax, an error far below half a step.
func headScale(m, qmax float32) float32 {
	s := m / qmax
	if math.IsInf(float64(float32(s*qmax)), 1) {
		s = math.Nextafter32(s, 0)
	}
	return s
}

// putScale stores a float32 scale little-endian.
func putScale(b []byte, s float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(s)) }

// getScale loads a float32 scale stored by putScale.
func getScale(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// roundToInt8 rounds v half away from zero (C's roundf) and clamps it to [-127, 127].
// NaN becomes 0, so the result is defined for every input.
func roundToInt8(v float32) int8 {
	switch {
	case v >= 127:
		return 127
	case v <= -127:
		return -127
	case v != v:
		return 0
	}
	return int8(math.Round(float64(v)))
}
