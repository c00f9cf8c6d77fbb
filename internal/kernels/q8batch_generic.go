package kernels

// matMulQ8_0Generic is the portable definition of DotQ8_0Batch: rows [start, end) of w
// against every vector, out[b·stride + r] for vector b and row r.
func matMulQ8_0Generic(out []float32, w []byte, x *Q8Batch, rows, rb, start, end int) {
	for r := start; r < end; r++ {
		for b := range x.in {
			out[b*rows+r] = dotQ8_0Q8Generic(x.in[b], w[r*rb:(r+1)*rb])
		}
	}
}
