package kernels

// Scale sets x[i] *= s for every i: one rounded float32 multiply each, the same bits in
// any order. On amd64 with AVX it runs eight at a time (scale_amd64.s).
func Scale(x []float32, s float32) {
	scale(x, s)
}

// scaleGeneric is the portable definition of Scale.
func scaleGeneric(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// maxGeneric is the portable definition of the maximum Softmax subtracts: x[0], replaced
// by every later element greater than the current maximum. A NaN is never greater, so
// NaNs after the first element are passed over, and a NaN first element stays. len(x) > 0.
func maxGeneric(x []float32) float32 {
	return maxFold(x[0], x[1:])
}

// maxFold is maxGeneric's step over xs from the maximum mx.
func maxFold(mx float32, xs []float32) float32 {
	for _, v := range xs {
		if v > mx {
			mx = v
		}
	}
	return mx
}
