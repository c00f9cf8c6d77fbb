package kernels

// MatMulRows computes, for rows r in [start, end) of the row-major matrix w (rows × cols) and
// for every one of the batch input vectors x[b*cols:(b+1)*cols], the output
// out[b*rows+r] = Dot(x_b, w_r). Each weight row is read once and used for the whole batch
// while it is in cache; every output keeps Dot's exact order, so a row's result does not
// depend on which other rows share the batch.
//
// It panics, like the plain loop over Dot would, when an index is out of range. out should
// not overlap w or x; if it does, the result is that of the plain loop (rows in increasing
// order, and for each row the batch in increasing order), which is what the portable path
// computes.
func MatMulRows(out, w, x []float32, rows, cols, batch, start, end int) {
	matMulRows(out, w, x, rows, cols, batch, start, end)
}
