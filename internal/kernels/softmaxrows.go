package kernels

import "fmt"

// SoftmaxRows applies Softmax to each of rows arrays of n values, row r at
// x[r·stride : r·stride+n]: the same bits as one Softmax per row (each row's maximum, its
// exponentials, its sum left to right, then the scaling), but four rows at a time (and the
// last two or three together), so that their sums, each a chain of dependent additions, run
// side by side instead of one after another (attention's query heads of one decode row:
// equally long, independent). It panics if stride < n or x ends before the last row.
func SoftmaxRows(x []float32, rows, n, stride int) {
	if n <= 0 || rows <= 0 {
		return
	}
	if stride < n || rows-1 > (len(x)-n)/stride || len(x) < n {
		panic(fmt.Sprintf("kernels: SoftmaxRows: %d floats hold fewer than %d rows of %d, %d apart", len(x), rows, n, stride))
	}
	r := 0
	for ; r+4 <= rows; r += 4 {
		a := x[r*stride : r*stride+n]
		b := x[(r+1)*stride : (r+1)*stride+n]
		c := x[(r+2)*stride : (r+2)*stride+n]
		d := x[(r+3)*stride : (r+3)*stride+n]
		b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
		expShifted(a, maxOf(a))
		expShifted(b, maxOf(b))
		expShifted(c, maxOf(c))
		expShifted(d, maxOf(d))
		var sa, sb, sc, sd float32
		for i := range a {
			sa += a[i]
			sb += b[i]
			sc += c[i]
			sd += d[i]
		}
		scale(a, 1/sa)
		scale(b, 1/sb)
		scale(c, 1/sc)
		scale(d, 1/sd)
	}
	switch rows - r { // the last two or three side by side too
	case 3:
		a := x[r*stride : r*stride+n]
		b := x[(r+1)*stride : (r+1)*stride+n]
		c := x[(r+2)*stride : (r+2)*stride+n]
		b, c = b[:len(a)], c[:len(a)]
		expShifted(a, maxOf(a))
		expShifted(b, maxOf(b))
		expShifted(c, maxOf(c))
		var sa, sb, sc float32
		for i := range a {
			sa += a[i]
			sb += b[i]
			sc += c[i]
		}
		scale(a, 1/sa)
		scale(b, 1/sb)
		scale(c, 1/sc)
	case 2:
		a := x[r*stride : r*stride+n]
		b := x[(r+1)*stride : (r+1)*stride+n]
		b = b[:len(a)]
		expShifted(a, maxOf(a))
		expShifted(b, maxOf(b))
		var sa, sb float32
		for i := range a {
			sa += a[i]
			sb += b[i]
		}
		scale(a, 1/sa)
		scale(b, 1/sb)
	case 1:
		Softmax(x[r*stride : r*stride+n])
	}
}
