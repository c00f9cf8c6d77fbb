package kernels

import "fmt"

// DecodeF16Strided widens len(dst)/n rows of n IEEE 754 binary16 values that start stride
// bytes apart in src (one head of the consecutive slots of an f16 cache block) to float32,
// row i at dst[i·n:(i+1)·n]: DecodeF16 of every row, the same bits (the conversion is
// exact), in one call. It panics if n < 1, len(dst) is not a multiple of n, stride < 2n or
// src ends before the last row.
//
// next (nil for none) holds the rows the caller reads after these, laid out as src (the
// same head of the next cache block's slots, which lies anywhere in the pool): the fast
// kernel asks the memory for each of its rows into L2 as it decodes the row of src. It is
// only a hint; the result does not depend on it.
func DecodeF16Strided(dst []float32, src []byte, n, stride int, next []byte) {
	if n < 1 || len(dst)%n != 0 {
		panic(fmt.Sprintf("kernels: DecodeF16Strided: %d values are not a whole number of rows of %d", len(dst), n))
	}
	rows := len(dst) / n
	span := stridedSpan("DecodeF16Strided", "bytes", rows, 2*n, stride, len(src))
	if rows == 0 {
		return
	}
	decodeF16Strided(dst, src[:span], n, stride, next)
}

// decodeF16StridedGeneric is the portable definition of DecodeF16Strided.
func decodeF16StridedGeneric(dst []float32, src []byte, n, stride int) {
	for i := range len(dst) / n {
		decodeF16Generic(dst[i*n:(i+1)*n], src[i*stride:i*stride+2*n])
	}
}
