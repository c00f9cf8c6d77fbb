//go:build amd64 && !purego

package kernels

import "unsafe"

// The dispatch of Dot, Axpy and MatMulRows. Which fast implementations may run is decided
// in registry.go (from the CPU at start-up, then by SetPortable and Restrict); here each
// call takes the fastest one that is on and whose preconditions the arguments meet, and
// falls back to the portable Go otherwise. The float kernels use AVX (256-bit VMULPS,
// VADDPS, VMASKMOVPS, ...) and, for the prefill blocks, AVX-512F; they never fuse a
// multiply with an add (no FMA instruction), which would round differently from the
// portable Go. The row dots (rowdot_amd64.go) need AVX2 and F16C, the Q8_0 products
// (q8input_amd64.go) AVX2 or AVX-512 VNNI, the exponentials (exp_amd64.go) FMA with
// AVX-512F (exp_amd64.s) or with AVX2 (exp_avx2_amd64.s), because they repeat what math.Exp
// computes with FMA.

func dot(x, y []float32) float32 {
	if implDotAVX.on {
		return dotAVX(x, y)
	}
	return dotGeneric(x, y)
}

func axpy(dst []float32, a float32, x []float32) {
	if implAxpyAVX.on && !overlapsBefore(x, dst) {
		axpyAVX(dst, a, x)
		return
	}
	axpyGeneric(dst, a, x)
}

func matMulRows(out, w, x []float32, rows, cols, batch, start, end int) {
	if matMulRowsFastOK(out, w, x, rows, cols, batch, start, end) {
		switch {
		case batch == 1 && cols%8 == 0 && implMatVecAVX.on:
			matVecAVX(out, w, x, cols, start, end)
			return
		case batch > 1 && cols%8 == 0 && implMatMulAVX.on:
			gemmAVX(out, w, x, rows, cols, batch, start, end, nil, implMatMulAVX512.on)
			return
		case implMatMulAVX.on:
			matMulRowsAVX(out, w, x, rows, cols, batch, start, end, implMatMulAVX512.on)
			return
		}
	}
	matMulRowsGeneric(out, w, x, rows, cols, batch, start, end)
}

func matMulRowsDecoded(out, x []float32, rows, cols, batch, start, end int, decode func(dst []float32, r int)) {
	if batch > 1 && cols%8 == 0 && implMatMulAVX.on && decodedFastOK(out, x, rows, cols, batch, start, end) {
		gemmAVX(out, nil, x, rows, cols, batch, start, end, decode, implMatMulAVX512.on)
		return
	}
	matMulRowsDecodedGeneric(out, x, rows, cols, batch, start, end, decode)
}

// decodedFastOK is matMulRowsFastOK for MatMulRowsDecoded, which reads no weight slice.
func decodedFastOK(out, x []float32, rows, cols, batch, start, end int) bool {
	if cols <= 0 || batch <= 0 || start < 0 || start >= end || end > rows {
		return false
	}
	if batch > len(x)/cols || end > len(out) || batch-1 > (len(out)-end)/rows {
		return false
	}
	return !overlap(out[start:(batch-1)*rows+end], x[:batch*cols])
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
