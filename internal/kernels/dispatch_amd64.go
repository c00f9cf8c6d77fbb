//go:build amd64 && !purego

package kernels

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The code path is decided once, at package initialisation. The assembly kernels need AVX
// (256-bit VEX instructions: VMULPS, VADDPS, VMASKMOVPS, VEXTRACTF128, VBROADCASTSS) and an
// operating system that saves the YMM registers, which cpu.X86.HasAVX includes; the
// MatMulRows block for four batch vectors also needs AVX-512F (and ZMM state saving, which
// cpu.X86.HasAVX512F includes). Nothing from AVX2 or FMA is used: a fused multiply-add
// would round differently from the portable Go.
var (
	useAVX    = cpu.X86.HasAVX
	useAVX512 = useAVX && cpu.X86.HasAVX512F
)

// SetPortable switches every kernel of the package to its portable Go version (on true) or
// back to the code path chosen at start-up (on false), so that a benchmark can measure both
// in one run. It must not be called while any kernel runs. In a purego build it does
// nothing.
func SetPortable(on bool) {
	if on {
		useAVX, useAVX512, useRowAVX2, useRowAVX512, useQ8VNNI, useExpAVX512 = false, false, false, false, false, false
		return
	}
	useAVX, useAVX512, useRowAVX2, useRowAVX512, useQ8VNNI, useExpAVX512 = startAVX, startAVX512, startRowAVX2, startRowAVX512, startQ8VNNI, startExpAVX512
}

// The choice made at start-up, which SetPortable(false) restores.
var (
	startAVX, startAVX512        = useAVX, useAVX512
	startRowAVX2, startRowAVX512 = useRowAVX2, useRowAVX512
)

// Implementation names the code path that Dot, MatMulRows and Axpy use: "avx512" for the
// AVX kernels plus the AVX-512 MatMulRows block (batches of four and more), "avx" for the
// AVX kernels alone, "generic" for the portable Go (on CPUs without AVX, with -tags purego,
// or on other architectures). All compute the same bits.
func Implementation() string {
	switch {
	case useAVX512:
		return "avx512"
	case useAVX:
		return "avx"
	}
	return "generic"
}

func dot(x, y []float32) float32 {
	if useAVX {
		return dotAVX(x, y)
	}
	return dotGeneric(x, y)
}

func axpy(dst []float32, a float32, x []float32) {
	if useAVX && !overlapsBefore(x, dst) {
		axpyAVX(dst, a, x)
		return
	}
	axpyGeneric(dst, a, x)
}

func matMulRows(out, w, x []float32, rows, cols, batch, start, end int) {
	if useAVX && matMulRowsFastOK(out, w, x, rows, cols, batch, start, end) {
		matMulRowsAVX(out, w, x, rows, cols, batch, start, end, useAVX512)
		return
	}
	matMulRowsGeneric(out, w, x, rows, cols, batch, start, end)
}

// matMulRowsFastOK reports whether the assembly may run MatMulRows: all indices in range,
// at least one output, and out not overlapping what is read. Everything else (including
// calls that panic) goes to the portable loop, which then defines the behaviour, panics
// included.
func matMulRowsFastOK(out, w, x []float32, rows, cols, batch, start, end int) bool {
	if cols <= 0 || batch <= 0 || start < 0 || start >= end || end > rows {
		return false
	}
	// end*cols <= len(w), batch*cols <= len(x), (batch-1)*rows+end <= len(out), without
	// overflowing.
	if end > len(w)/cols || batch > len(x)/cols || end > len(out) || batch-1 > (len(out)-end)/rows {
		return false
	}
	written := out[start : (batch-1)*rows+end]
	return !overlap(written, w[start*cols:end*cols]) && !overlap(written, x[:batch*cols])
}

// overlap reports whether a and b share any element of memory.
func overlap(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b))*4 && b0 < a0+uintptr(len(a))*4
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
