package kernels

// MatMulRows computes, for rows r in [start, end) of the row-major matrix w (rows × cols) and
// for every one of the batch input vectors x[b*cols:(b+1)*cols], the output
// out[b*rows+r] = Dot(x_b, w_r). Each weight row is read once and used for the whole batch
// while it is in cache; every output keeps Dot's exact order, so a row's result does not
// depend on which other rows share the batch.
func MatMulRows(out, w, x []float32, rows, cols, batch, start, end int) {
	for r := start; r < end; r++ {
		wr := w[r*cols : (r+1)*cols]
		for b := 0; b < batch; b++ {
			out[b*rows+r] = Dot(x[b*cols:(b+1)*cols], wr)
		}
	}
}
