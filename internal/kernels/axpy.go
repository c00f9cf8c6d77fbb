package kernels

// Axpy adds a·x to dst element by element: dst[i] = dst[i] + float32(a*x[i]), with a rounded
// multiply and a rounded add (never fused), for i < len(dst). Like the expression
// x[:len(dst)], it panics if cap(x) < len(dst).
// When x and dst overlap, the result is that of the plain loop in increasing i.
func Axpy(dst []float32, a float32, x []float32) {
	axpy(dst, a, x[:len(dst)])
}

// Scale multiplies every element of x by a.
func Scale(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}
