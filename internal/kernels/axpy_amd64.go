//go:build amd64 && !purego

package kernels

import "unsafe"

// axpyAVXAsm sets dst[i] = dst[i] + float32(a*x[i]) for the n floats at dst and x:
// VMULPS then VADDPS on 32 then 8 elements at a time, then VMULSS and VADDSS one element at
// a time. Every element is computed on its own, so the order of the elements does not
// matter as long as no element of x is read after a store to it. Implemented in
// axpy_amd64.s.
//
//go:noescape
func axpyAVXAsm(dst *float32, a float32, x *float32, n int)

// axpyAVX is axpyGeneric computed by axpyAVXAsm, for x that does not start before dst and
// reach into it (see overlapsBefore). x must be at least as long as dst.
func axpyAVX(dst []float32, a float32, x []float32) {
	x = x[:len(dst)]
	axpyAVXAsm(unsafe.SliceData(dst), a, unsafe.SliceData(x), len(dst))
}

// axpyRowsAVXAsm adds a[t]·x_t to the n floats at dst for t < rows, x_t the n floats at
// x + t·stride, n a positive multiple of 8: columns in chunks of 64 (eight YMM accumulators)
// then 8, each chunk loaded once, updated for every t in order (VMULPS then VADDPS, as
// axpyAVXAsm) and stored once. Implemented in axpy_amd64.s.
//
//go:noescape
func axpyRowsAVXAsm(dst, a, x *float32, n, stride, rows int)

func axpyRows(dst, a, x []float32, stride int) {
	n := len(dst)
	n8 := n &^ 7
	if !implAxpyRowsAVX.on || n8 == 0 || len(a) == 0 || overlap(dst, x) {
		axpyRowsGeneric(dst, a, x, stride)
		return
	}
	axpyRowsAVXAsm(unsafe.SliceData(dst), unsafe.SliceData(a), unsafe.SliceData(x), n8, stride, len(a))
	if n8 < n {
		for t, at := range a {
			axpyGeneric(dst[n8:], at, x[t*stride+n8:t*stride+n])
		}
	}
}
