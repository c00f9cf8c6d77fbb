package kernels

// matMulHalfGeneric is the portable definition of MatMulF16 and MatMulBF16: every row
// against every input with the portable row dot.
func matMulHalfGeneric(out, x []float32, w []byte, rows, cols, batch, start, end int, h *halfFormat) {
	rb := 2 * cols
	for r := start; r < end; r++ {
		row := w[r*rb : (r+1)*rb]
		for b := range batch {
			out[b*rows+r] = h.dot(x[b*cols:(b+1)*cols], row)
		}
	}
}
