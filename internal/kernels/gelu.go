package kernels

import "math"

// The elementwise steps of the Gemma architectures, portable Go only: the gated GELU of
// their feed-forward and the tanh soft-cap of Gemma 2's attention scores and logits. They
// run once per hidden value or per score, far from the products that dominate a step.

// geluTanhC is sqrt(2/π), the constant of the tanh approximation of GELU.
var geluTanhC = math.Sqrt(2 / math.Pi)

// GELUTanh is the tanh approximation of GELU (PyTorch's gelu(approximate="tanh"), Hugging
// Face's gelu_pytorch_tanh, ggml's gelu), in float64: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
func GELUTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(geluTanhC*(x+0.044715*x*x*x)))
}

// GELUTanhGLU writes gate[i] = gelu_tanh(gate[i]) · up[i], the gated feed-forward of Gemma
// (GeGLU): the GELU is GELUTanh of float64(gate[i]) rounded to float32, then one float32
// multiply by up[i].
func GELUTanhGLU(gate, up []float32) {
	up = up[:len(gate)]
	for i, g := range gate {
		gate[i] = float32(GELUTanh(float64(g))) * up[i]
	}
}

// SoftCap replaces every x[i] with limit·tanh(x[i]/limit), which bounds it to (-limit, limit)
// and leaves small values nearly unchanged (Gemma 2's attention-logit and final-logit
// soft-capping): the division and the final multiply in float32, as transformers computes
// them in a float32 model, the tanh in float64 rounded to float32. limit must be > 0.
func SoftCap(x []float32, limit float32) {
	for i, v := range x {
		x[i] = float32(math.Tanh(float64(v/limit))) * limit
	}
}
