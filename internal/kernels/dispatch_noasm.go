//go:build !amd64 || purego

package kernels

// Implementation names the code path that Dot, MatMulRows and Axpy use: in this build
// (-tags purego, or an architecture without assembly kernels) always "generic", the
// portable Go.
func Implementation() string { return "generic" }

// SetPortable would switch the kernels to their portable versions; in this build they
// always are, so it does nothing.
func SetPortable(on bool) {}

func dot(x, y []float32) float32 { return dotGeneric(x, y) }

func axpy(dst []float32, a float32, x []float32) { axpyGeneric(dst, a, x) }

func axpyRows(dst, a, x []float32) { axpyRowsGeneric(dst, a, x) }

func matMulRows(out, w, x []float32, rows, cols, batch, start, end int) {
	matMulRowsGeneric(out, w, x, rows, cols, batch, start, end)
}

func expShifted(x []float32, shift float32) { expShiftedGeneric(x, shift) }

func swiglu(gate, up []float32) { swigluGeneric(gate, up) }

func prefetch(b []byte) {}
