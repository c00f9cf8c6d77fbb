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
