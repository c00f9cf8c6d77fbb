package engine

import (
	"errors"
	"fmt"
	"math"
)

// ErrNonFinite marks a request ended because the model produced a NaN or infinite logit:
// nothing sampled from such logits means anything, and no JSON can carry them. kvref
// validates the hyper-parameters at load (an RMSNorm epsilon of 0 or NaN, a RoPE base of
// NaN), so what is left is a model with non-finite or overflowing weights.
var ErrNonFinite = errors.New("engine: the model produced a non-finite logit")

// checkFinite returns an error wrapping ErrNonFinite unless every logit is finite. It runs
// on the scheduler's thread for every row that samples, so it first takes one branch-free
// pass (v·0 is ±0 for a finite v and NaN for a NaN or an infinity, and a sum of them is 0
// only when all are 0), and looks for the culprit only when that pass finds one.
func checkFinite(logits []float32, seq, step, pos int) error {
	var a0, a1, a2, a3 float32
	i := 0
	for ; i+4 <= len(logits); i += 4 {
		a0 += logits[i] * 0
		a1 += logits[i+1] * 0
		a2 += logits[i+2] * 0
		a3 += logits[i+3] * 0
	}
	for ; i < len(logits); i++ {
		a0 += logits[i] * 0
	}
	if a0+a1+a2+a3 == 0 {
		return nil
	}
	for i, v := range logits {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: sequence %d step %d (position %d): the logit of token %d is %v; the model's weights are broken (NaN or infinite values, or values that overflow float32)",
				ErrNonFinite, seq, step, pos, i, v)
		}
	}
	return nil
}
