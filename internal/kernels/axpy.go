package kernels

// Axpy adds a·x to dst element by element: dst[i] = dst[i] + float32(a*x[i]), with a rounded
// multiply and a rounded add (never fused), for i < len(dst). Like the expression
// x[:len(dst)], it panics if cap(x) < len(dst).
// When x and dst overlap, the result is that of the plain loop in increasing i.
func Axpy(dst []float32, a float32, x []float32) {
	axpy(dst, a, x[:len(dst)])
}

// AxpyRows adds a[t]·x_t to dst for t = 0, 1, ..., len(a)-1 in that order, where x_t is
// x[t·n:(t+1)·n] and n = len(dst): exactly Axpy(dst, a[t], x_t) one t after another, the
// same bits, but on the fast path dst stays in registers across all t (attention's weighted
// sum of value rows). It panics if len(x) < len(a)·len(dst).
func AxpyRows(dst, a, x []float32) {
	n := len(dst)
	if n > 0 && len(a) > len(x)/n {
		panic("kernels: AxpyRows: x holds fewer than len(a) rows of len(dst)")
	}
	axpyRows(dst, a, x[:len(a)*n], n)
}

// AxpyRowsStrided is AxpyRows for rows stride floats apart: x_t is
// x[t·stride : t·stride+len(dst)] (attention's values of one head in consecutive cache
// slots). The same bits as one Axpy per row in order. It panics if stride < len(dst) or x
// ends before the last row.
func AxpyRowsStrided(dst, a, x []float32, stride int) {
	span := stridedSpan("AxpyRowsStrided", "floats", len(a), len(dst), stride, len(x))
	if len(a) == 0 {
		return
	}
	axpyRows(dst, a, x[:span], stride)
}

// AxpyF16RowsStrided is AxpyRowsStrided for rows of IEEE 754 binary16 values that start
// stride bytes apart: x_t is the len(dst) halves at x[t·stride:], widened to float32
// (exactly) and added as Axpy(dst, a[t], x_t) one t after another, the same bits as
// DecodeF16Strided followed by AxpyRows, but without the float32 copy (attention's values of
// one head of an f16 cache, read where they lie). It panics if stride < 2·len(dst) or x ends
// before the last row.
func AxpyF16RowsStrided(dst, a []float32, x []byte, stride int) {
	span := stridedSpan("AxpyF16RowsStrided", "bytes", len(a), 2*len(dst), stride, len(x))
	if len(a) == 0 || len(dst) == 0 {
		return
	}
	axpyF16Rows(dst, a, x[:span], stride)
}
