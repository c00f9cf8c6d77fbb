package kernels

import "fmt"

// DecodeF16Strided widens len(dst)/n rows of n IEEE 754 binary16 values that start stride
// bytes apart in src (one head of the consecutive slots of an f16 cache block) to float32,
// row i at dst[i·n:(i+1)·n]: DecodeF16 of every row, the same bits (the conversion is
// exact), in one call. It panics if n < 1, len(dst) is not a multiple of n, stride < 2n or
// src ends before the last row.
func DecodeF16Strided(dst []float32, src []byte, n, stride int) {
	if n < 1 || len(dst)%n != 0 {
		panic(fmt.Sprintf("kernels: DecodeF16Strided: %d values are not a whole number of rows of %d", len(dst), n))
	}
	rows := len(dst) / n
	span := stridedSpan("DecodeF16Strided", "bytes", rows, 2*n, stride, len(src))
	if rows == 0 {
		return
	}
	decodeF16Strided(dst, src[:span], n, stride)
}

// decodeF16StridedGeneric is the portable definition of DecodeF16Strided.
func decodeF16StridedGeneric(dst []float32, src []byte, n, stride int) {
	for i := range len(dst) / n {
		decodeF16Generic(dst[i*n:(i+1)*n], src[i*stride:i*stride+2*n])
	}
}
