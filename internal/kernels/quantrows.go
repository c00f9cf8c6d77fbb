package kernels

// quantizedRows slices w to the len(out) rows of n/blockLen blocks of blockBytes bytes
// that the row dots named "Dot"+format+op read, and returns them with the bytes of one row; it
// panics if w is shorter. With n == 0 there is nothing to multiply: it clears out and
// reports false.
func quantizedRows(format, op string, out []float32, w []byte, n, blockLen, blockBytes int) (rows []byte, rb int, ok bool) {
	rb = n / blockLen * blockBytes
	rows = w[:formatRowsBytes("", format, op, len(out), rb)]
	if n == 0 {
		clear(out)
		return nil, 0, false
	}
	return rows, rb, true
}

// forRowQuarters drives a four-row kernel over rows rows of rb bytes: run(r, q·rb, q) for
// r = 0..q-1, q = rows/4, so that each call takes rows r, r+q, r+2q and r+3q (the quarters
// of the rows side by side, as four sequential streams); then run(r, 0, 0) for each row r
// left over, the same kernel with all four rows the same.
func forRowQuarters(rows, rb int, run func(r, stride, outStride int)) {
	q := rows / 4
	for r := 0; r < q; r++ {
		run(r, q*rb, q)
	}
	for r := 4 * q; r < rows; r++ {
		run(r, 0, 0)
	}
}
