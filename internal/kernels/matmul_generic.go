package kernels

// matMulRowsGeneric is the portable definition of MatMulRows: for every row r in
// [start, end), then for every batch vector b, out[b*rows+r] = dotGeneric(x_b, w_r).
func matMulRowsGeneric(out, w, x []float32, rows, cols, batch, start, end int) {
	for r := start; r < end; r++ {
		wr := w[r*cols : (r+1)*cols]
		for b := 0; b < batch; b++ {
			out[b*rows+r] = dotGeneric(x[b*cols:(b+1)*cols], wr)
		}
	}
}
