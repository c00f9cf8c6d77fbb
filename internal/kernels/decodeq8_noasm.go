//go:build !amd64 || purego

package kernels

func decodeQ8_0Strided(dst []float32, src []byte, nb, stride int, _ []byte) {
	decodeQ8_0StridedGeneric(dst, src, nb, stride)
}
