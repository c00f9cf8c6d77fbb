//go:build amd64 && !purego

package kernels

import "unsafe"

// axpyAVXAsm sets dst[i] = dst[i] + float32(a*x[i]) for the n floats at dst and x:
// VMULPS then VADDPS on 32 then 8 elements at a time, then VMULSS and VADDSS one element at
// a time. Every element is computed on its own, so the order of the elements does not
// matter as long as no element of x is read after a store to it. Implemented in
// axpy_avx_amd64.s.
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
// axpyAVXAsm) and stored once. Implemented in axpy_avx_amd64.s.
//
//go:noescape
func axpyRowsAVXAsm(dst, a, x *float32, n, stride, rows int)

// axpyRowsAVX512Asm is axpyRowsAVXAsm in ZMM registers, columns in chunks of 64 then 16;
// n is a positive multiple of 16. Implemented in axpy_avx512_amd64.s.
//
//go:noescape
func axpyRowsAVX512Asm(dst, a, x *float32, n, stride, rows int)

func axpyRows(dst, a, x []float32, stride int) {
	n := len(dst)
	n8 := n &^ 7
	if !implAxpyRowsAVX.on || n8 == 0 || len(a) == 0 || overlap(dst, x) {
		axpyRowsGeneric(dst, a, x, stride)
		return
	}
	done := n8 // the columns the assembly adds; the rest go through axpyGeneric
	if n16 := n &^ 15; implAxpyRowsAVX512.on && n16 > 0 {
		axpyRowsAVX512Asm(unsafe.SliceData(dst), unsafe.SliceData(a), unsafe.SliceData(x), n16, stride, len(a))
		done = n16
	} else {
		axpyRowsAVXAsm(unsafe.SliceData(dst), unsafe.SliceData(a), unsafe.SliceData(x), n8, stride, len(a))
	}
	if done < n {
		for t, at := range a {
			axpyGeneric(dst[done:], at, x[t*stride+done:t*stride+n])
		}
	}
}

func axpy(dst []float32, a float32, x []float32) {
	if implAxpyAVX.on && !overlapsBefore(x, dst) {
		axpyAVX(dst, a, x)
		return
	}
	axpyGeneric(dst, a, x)
}

// overlapsBefore reports whether x starts before dst and reaches into it: the one aliasing
// in which Axpy's plain loop reads values it has already updated (x[i] = dst[i-k]), so a
// vector loop, which reads eight elements before writing them, would differ.
func overlapsBefore(x, dst []float32) bool {
	if len(x) == 0 || len(dst) == 0 {
		return false
	}
	x0 := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	d0 := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	return x0 < d0 && d0 < x0+uintptr(len(x))*4
}

// axpyF16RowsAVX2Asm is axpyRowsAVXAsm for rows of halves stride bytes apart: each chunk of
// columns of a row is widened by VCVTPH2PS (exact) straight from memory, then multiplied and
// added as there. n is a positive multiple of 8. Implemented in axpy_avx2_amd64.s.
//
//go:noescape
func axpyF16RowsAVX2Asm(dst, a *float32, x *byte, n, stride, rows int)

// axpyF16RowsNextAVX2Asm is axpyF16RowsAVX2Asm that prefetches, with each row's chunk of 64
// columns, the bytes next bytes further (a distance, not a pointer: it may lead anywhere).
//
//go:noescape
func axpyF16RowsNextAVX2Asm(dst, a *float32, x *byte, n, stride, rows, next int)

// axpyF16RowsNext is axpyF16Rows that prefetches the rows of next (laid out as x's) while it
// reads x's.
func axpyF16RowsNext(dst, a []float32, x []byte, stride int, next []byte) {
	n := len(dst)
	n8 := n &^ 7
	if !implAxpyF16AVX2.on || n8 == 0 || len(next) == 0 {
		axpyF16Rows(dst, a, x, stride)
		return
	}
	axpyF16RowsNextAVX2Asm(unsafe.SliceData(dst), unsafe.SliceData(a), unsafe.SliceData(x), n8, stride, len(a), distance(x, next))
	if n8 < n {
		axpyF16RowsGeneric(dst[n8:], a, x[2*n8:], stride)
	}
}

func axpyF16Rows(dst, a []float32, x []byte, stride int) {
	n := len(dst)
	n8 := n &^ 7
	if !implAxpyF16AVX2.on || n8 == 0 {
		axpyF16RowsGeneric(dst, a, x, stride)
		return
	}
	axpyF16RowsAVX2Asm(unsafe.SliceData(dst), unsafe.SliceData(a), unsafe.SliceData(x), n8, stride, len(a))
	if n8 < n {
		axpyF16RowsGeneric(dst[n8:], a, x[2*n8:], stride)
	}
}
