package kernels

import "math"

// The portable definitions of the exponentials of Softmax and SwiGLU; exp_avx512_amd64.s computes
// the same bits eight at a time.

// expShiftedGeneric sets x[i] = float32(math.Exp(float64(x[i] - shift))).
func expShiftedGeneric(x []float32, shift float32) {
	for i, v := range x {
		x[i] = float32(math.Exp(float64(v - shift)))
	}
}

// swigluGeneric is the portable definition of SwiGLU.
func swigluGeneric(gate, up []float32) {
	up = up[:len(gate)]
	for i, g := range gate {
		s := float32(float64(g) / (1 + math.Exp(-float64(g))))
		gate[i] = s * up[i]
	}
}
