package model

import (
	"fmt"
	"math"
)

// The checks of the floating-point hyper-parameters, shared by Config.Validate and the
// loaders (which name the file's own key). Each returns nil or the reason, worded to follow
// the key's name: "llama.rope.freq_base is NaN; ...". A model that loads with one of these
// wrong computes NaN or nonsense from its first token on.

// CheckNormEps checks an RMSNorm epsilon: a finite number in (0, 1] that stays positive as
// float32 (models use 1e-6 to 1e-5). 0 divides by zero on an all-zero row; NaN and ±Inf
// make every logit NaN; 1e300 is +Inf in float32.
func CheckNormEps(eps float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= 0 || eps > 1 || float32(eps) == 0 {
		return fmt.Errorf("is %g; an RMSNorm epsilon must be a finite number in (0, 1] that float32 can hold (models use 1e-6 to 1e-5)", eps)
	}
	return nil
}

// CheckRopeBase checks a RoPE frequency base: finite and positive (models use 10000 to
// 1000000).
func CheckRopeBase(base float64) error {
	if math.IsNaN(base) || math.IsInf(base, 0) || base <= 0 {
		return fmt.Errorf("is %g; a RoPE frequency base must be a finite number > 0 (models use 10000 to 1000000)", base)
	}
	return nil
}

// CheckPositiveFinite checks a factor that must be a finite number > 0 (a RoPE scaling
// factor, a per-frequency divisor).
func CheckPositiveFinite(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return fmt.Errorf("is %g; it must be a finite number > 0", v)
	}
	return nil
}

// CheckFinite returns the index of the first value that is NaN or infinite, and the value,
// or -1.
func CheckFinite(xs []float32) (int, float32) {
	for i, v := range xs {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return i, v
		}
	}
	return -1, 0
}

// CheckOptionalPositive checks a hyper-parameter where 0 means "none" (a soft-cap, a query
// scalar) and anything else must be a finite number > 0 that float32 can hold: NaN or a
// negative cap gives NaN or flipped scores, and a cap that is 0 in float32 divides by zero.
func CheckOptionalPositive(v float64) error {
	if v == 0 {
		return nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || float32(v) == 0 || math.IsInf(float64(float32(v)), 0) {
		return fmt.Errorf("is %g; it must be a finite number > 0 that float32 can hold (or absent for none)", v)
	}
	return nil
}
