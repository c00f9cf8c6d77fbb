package kernels

import "github.com/kvref/kvref/internal/half"

// axpyGeneric is the portable definition of Axpy: dst[i] += float32(a*x[i]) for i in
// increasing order. x must be at least as long as dst.
func axpyGeneric(dst []float32, a float32, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += float32(a * x[i])
	}
}

// axpyRowsGeneric is the portable definition of AxpyRows and AxpyRowsStrided: one
// axpyGeneric per row of x, the rows stride floats apart.
func axpyRowsGeneric(dst, a, x []float32, stride int) {
	n := len(dst)
	for t, at := range a {
		axpyGeneric(dst, at, x[t*stride:t*stride+n])
	}
}

// axpyF16RowsGeneric is the portable definition of AxpyF16RowsStrided: for each row t in
// order, dst[i] += float32(a[t]·widen(x_t[i])) for i in increasing order.
func axpyF16RowsGeneric(dst, a []float32, x []byte, stride int) {
	table := half.F16Table
	for t, at := range a {
		row := x[t*stride : t*stride+2*len(dst)]
		for i := range dst {
			dst[i] += float32(at * table[le16(row[2*i:])])
		}
	}
}
