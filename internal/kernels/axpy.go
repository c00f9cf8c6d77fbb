package kernels

// Axpy adds a·x to dst element by element: dst[i] = dst[i] + float32(a*x[i]), with a rounded
// multiply and a rounded add (never fused), for i < len(dst).
func Axpy(dst []float32, a float32, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += float32(a * x[i])
	}
}

// Scale multiplies every element of x by a.
func Scale(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}
