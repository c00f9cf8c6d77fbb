//go:build !amd64 || purego

package kernels

// In this build (-tags purego, or an architecture without assembly kernels) every kernel
// is its portable Go twin (FAMILY_generic.go): the dispatch of every family, in one place.

// axpy

func axpy(dst []float32, a float32, x []float32) { axpyGeneric(dst, a, x) }

func axpyRows(dst, a, x []float32, stride int) { axpyRowsGeneric(dst, a, x, stride) }

func axpyF16Rows(dst, a []float32, x []byte, stride int) { axpyF16RowsGeneric(dst, a, x, stride) }

func axpyF16RowsNext(dst, a []float32, x []byte, stride int, _ []byte) {
	axpyF16RowsGeneric(dst, a, x, stride)
}

// decodef16

func decodeF16(dst []float32, src []byte) { decodeF16Generic(dst, src) }

func encodeF16(dst []byte, src []float32) { encodeF16Generic(dst, src) }

// dot

func dot(x, y []float32) float32 { return dotGeneric(x, y) }

func dotRowsStrided(out, x, w []float32, stride int) { dotRowsStridedGeneric(out, x, w, stride) }

// exp

func expShifted(x []float32, shift float32) { expShiftedGeneric(x, shift) }

func swiglu(gate, up []float32) { swigluGeneric(gate, up) }

// halfmatmul

// halfFormat is one 16-bit row format: its portable row dot and the widening of a row
// (the amd64 build adds its assembly kernels).
type halfFormat struct {
	dot    func(x []float32, row []byte) float32 // the portable row dot
	decode func(dst []float32, src []byte)       // the row widened to float32
}

var (
	halfF16  = halfFormat{dot: dotF16Generic, decode: decodeF16}
	halfBF16 = halfFormat{dot: dotBF16Generic, decode: DecodeBF16}
)

func matMulHalf(out, x []float32, w []byte, rows, cols, batch, start, end int, h *halfFormat) {
	matMulHalfGeneric(out, x, w, rows, cols, batch, start, end, h)
}

// kbatch

func kBatchFast() bool { return false }

func kBatchOcts() bool { return false }

func dotKBatchFast(f *kFormat, out []float32, stride int, x *Q8KBatch, w []byte, rows, rb int) bool {
	return false
}

// kquant

func dotKRowsFast(f *kFormat, out []float32, x *Q8KInput, w []byte, rb int) {
	kRowsGeneric(f, out, x, w, rb)
}

func dotKRowsPairFast(f *kFormat, out []float32, vecStride int, x1, x2 *Q8KInput, w []byte, rows int) bool {
	return false
}

func dotLegacyRowsFast(f *legacyFormat, out []float32, x *Q8Input, w []byte, rb int) {
	legacyRowsGeneric(f, out, x, w, rb)
}

func quantizeQ8K(v *Q8KInput, x []float32) { quantizeQ8KGeneric(v, x) }

// matmul

func matMulRows(out, w, x []float32, rows, cols, batch, start, end int) {
	matMulRowsGeneric(out, w, x, rows, cols, batch, start, end)
}

func inputBlocks(cols, batch int) int { return 1 }

func matMulRowsDecoded(out, x []float32, rows, cols, batch, start, end int, decode func(dst []float32, r int)) {
	matMulRowsDecodedGeneric(out, x, rows, cols, batch, start, end, decode)
}

// prefetch

func prefetch(b []byte) {}

func prefetchL2(b []byte) {}

// q8batch

func matMulQ8_0(out []float32, w []byte, x *Q8Batch, rows, rb, start, end int) {
	matMulQ8_0Generic(out, w, x, rows, rb, start, end)
}

// legacy batches

func dotLegacyBatchDirect(f *legacyFormat, out []float32, stride int, x *Q8Batch, w []byte, rows int) bool {
	return false
}

// q8input

func dotQ8_0Q8Rows(out []float32, x *Q8Input, w []byte, rb int) { q8RowsGeneric(out, x, w, rb) }

func quantizeBlocks(v *Q8Input, x []float32) { quantizeBlocksGeneric(v, x) }

// rowdot

func dotF16(x []float32, row []byte) float32 { return dotF16Generic(x, row) }

func dotBF16(x []float32, row []byte) float32 { return dotBF16Generic(x, row) }

func dotF16Rows(out, x []float32, w []byte, rb int) { rowsGeneric(out, x, w, rb, dotF16Generic) }

func dotF16RowsStrided(out, x []float32, w []byte, stride int) {
	dotF16RowsStridedGeneric(out, x, w, stride)
}

func dotF16RowsStridedNext(out, x []float32, w []byte, stride int, _ []byte) {
	dotF16RowsStridedGeneric(out, x, w, stride)
}

func dotBF16Rows(out, x []float32, w []byte, rb int) { rowsGeneric(out, x, w, rb, dotBF16Generic) }
