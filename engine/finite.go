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

// checkFinite returns an error wrapping ErrNonFinite unless every logit is finite.
func checkFinite(logits []float32, seq, step, pos int) error {
	for i, v := range logits {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: sequence %d step %d (position %d): the logit of token %d is %v; the model's weights are broken (NaN or infinite values, or values that overflow float32)",
				ErrNonFinite, seq, step, pos, i, v)
		}
	}
	return nil
}
