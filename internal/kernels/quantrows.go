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
