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

// matMulRowsDecodedGeneric is the portable definition of MatMulRowsDecoded: each row
// decoded, then matMulRowsGeneric's loop over the batch.
func matMulRowsDecodedGeneric(out, x []float32, rows, cols, batch, start, end int, decode func(dst []float32, r int)) {
	row := make([]float32, cols)
	for r := start; r < end; r++ {
		decode(row, r)
		for b := 0; b < batch; b++ {
			out[b*rows+r] = dotGeneric(x[b*cols:(b+1)*cols], row)
		}
	}
}
