package kernels

import "fmt"

// Several heads of the same cache slots in one call. A decode row that meets a cache block
// alone (one query head per KV head, a sequence of its own) scores each of its heads
// against the block's keys and adds the block's values into each head's output: one
// strided row product or weighted sum per head. The *HeadsStrided kernels take a run of
// consecutive heads of the same rows at once, so that the checks and calls are paid once
// per block instead of once per head; each head is exactly the one-head kernel's call, so
// the bits are the same.

// DotHeadsStrided sets out[h·outStride + r] = Dot(q[h·qStride : h·qStride+dim],
// w[r·stride + h·dim : r·stride + (h+1)·dim]) for every head h < heads and row r < rows:
// heads consecutive heads of dim values in rows rows that start stride floats apart
// (attention's keys of a run of KV heads in the consecutive slots of an f32 cache block),
// one DotRowsStrided per head, the same bits. It panics if a stride is shorter than what
// it steps over or a slice ends before its last head or row.
func DotHeadsStrided(out []float32, outStride int, q []float32, qStride, heads, dim int, w []float32, rows, stride int) {
	if !checkHeadsStrided("DotHeadsStrided", "floats", heads, dim, rows, outStride, len(out), qStride, len(q), dim, stride, len(w)) {
		return
	}
	span := (rows-1)*stride + dim
	for h := range heads {
		dotRowsStrided(out[h*outStride:h*outStride+rows], q[h*qStride:h*qStride+dim], w[h*dim:h*dim+span], stride)
	}
}

// DotF16HeadsStrided is DotHeadsStrided for rows of IEEE 754 binary16 values that start
// stride bytes apart: row r's head h is the dim halves at w[r·stride + 2·h·dim:], and
// out[h·outStride + r] = DotF16(q[h·qStride : h·qStride+dim], that head), one
// DotF16RowsStrided per head, the same bits (an f16 cache's keys, read where they lie).
//
// next, laid out as w (nil for none), holds the rows the caller reads after these (the next
// cache block's): while the kernel reads a head of four rows it asks the memory for the
// same head of the same four rows of next (into L2), so that the next call finds them
// there. A cache block's successor lies anywhere in the pool, where the hardware cannot
// guess it; asked for in one burst before the work, the lines wait for L1's few miss
// buffers instead (BenchmarkDecodeDepth). It is only a hint: the results do not depend on
// next, and rows past its end are not asked for.
func DotF16HeadsStrided(out []float32, outStride int, q []float32, qStride, heads, dim int, w []byte, rows, stride int, next []byte) {
	if !checkHeadsStrided("DotF16HeadsStrided", "bytes", heads, dim, rows, outStride, len(out), qStride, len(q), 2*dim, stride, len(w)) {
		return
	}
	span := (rows-1)*stride + 2*dim
	for h := range heads {
		dotF16RowsStridedNext(out[h*outStride:h*outStride+rows], q[h*qStride:h*qStride+dim], w[2*h*dim:2*h*dim+span], stride, headsFrom(next, 2*h*dim))
	}
}

// headsFrom is next from byte off on, or nil when next ends before it.
func headsFrom(next []byte, off int) []byte {
	if off >= len(next) {
		return nil
	}
	return next[off:]
}

// AxpyHeadsStrided adds, for every head h < heads, a[h·aStride + r] times row r's head h
// (x[r·stride + h·dim : r·stride + (h+1)·dim]) to dst[h·dstStride : h·dstStride+dim], one
// row after another: one AxpyRowsStrided per head, the same bits (attention's values of a
// run of KV heads of an f32 cache block). It panics as DotHeadsStrided does.
func AxpyHeadsStrided(dst []float32, dstStride int, a []float32, aStride, heads, dim int, x []float32, rows, stride int) {
	if !checkHeadsStrided("AxpyHeadsStrided", "floats", heads, dim, rows, aStride, len(a), dstStride, len(dst), dim, stride, len(x)) {
		return
	}
	span := (rows-1)*stride + dim
	for h := range heads {
		axpyRows(dst[h*dstStride:h*dstStride+dim], a[h*aStride:h*aStride+rows], x[h*dim:h*dim+span], stride)
	}
}

// AxpyF16HeadsStrided is AxpyHeadsStrided for rows of binary16 values that start stride
// bytes apart (row r's head h at x[r·stride + 2·h·dim:]): one AxpyF16RowsStrided per head,
// the same bits (an f16 cache's values, added where they lie). next is
// DotF16HeadsStrided's hint: the same heads of next's rows are asked for as each row is
// added.
func AxpyF16HeadsStrided(dst []float32, dstStride int, a []float32, aStride, heads, dim int, x []byte, rows, stride int, next []byte) {
	if !checkHeadsStrided("AxpyF16HeadsStrided", "bytes", heads, dim, rows, aStride, len(a), dstStride, len(dst), 2*dim, stride, len(x)) {
		return
	}
	span := (rows-1)*stride + 2*dim
	for h := range heads {
		axpyF16RowsNext(dst[h*dstStride:h*dstStride+dim], a[h*aStride:h*aStride+rows], x[2*h*dim:2*h*dim+span], stride, headsFrom(next, 2*h*dim))
	}
}

// checkHeadsStrided checks a *HeadsStrided call of the kernel what: heads heads of dim
// values each (headLen units of unit each in the rows) in rows rows stride units apart,
// have units long; the per-row results (scores or weights, rows of them per head,
// rowsStride apart in a slice of rowsLen) and the per-head vectors (queries or outputs,
// dim each, vecStride apart in a slice of vecLen). It reports whether there is any work
// and panics on a shape the slices cannot hold, or a head of no values.
func checkHeadsStrided(what, unit string, heads, dim, rows, rowsStride, rowsLen, vecStride, vecLen, headLen, stride, have int) bool {
	if heads < 0 || dim < 1 || rows < 0 {
		panic(fmt.Sprintf("kernels: %s: %d heads of %d values in %d rows (heads and rows must not be negative, a head must hold values)", what, heads, dim, rows))
	}
	if heads == 0 || rows == 0 {
		return false
	}
	stridedSpan(what, "floats", heads, rows, rowsStride, rowsLen)
	stridedSpan(what, "floats", heads, dim, vecStride, vecLen)
	stridedSpan(what, unit, rows, rowsBytes(what, heads, headLen), stride, have)
	return true
}
