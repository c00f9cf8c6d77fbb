//go:build !amd64 || purego

package kernels

func dotQ8_0RowsStridedNext(out, x []float32, w []byte, stride int, _ []byte) {
	dotQ8_0RowsStridedGeneric(out, x, w, stride)
}

func axpyQ8_0RowsNext(dst, a []float32, x []byte, stride int, _ []byte) {
	axpyQ8_0RowsGeneric(dst, a, x, stride)
}
