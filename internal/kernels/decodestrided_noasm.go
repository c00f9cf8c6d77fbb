//go:build !amd64 || purego

package kernels

func decodeF16Strided(dst []float32, src []byte, n, stride int, _ []byte) {
	decodeF16StridedGeneric(dst, src, n, stride)
}
