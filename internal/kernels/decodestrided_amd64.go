//go:build amd64 && !purego

package kernels

import "unsafe"

// decodeF16StridedAVX2Asm widens rows rows of 8·blocks halves, the rows stride bytes apart
// at src, to float32 rows of 8·blocks values one after another at dst (VCVTPH2PS, as
// decodeF16AVX2Asm). rows > 0, blocks > 0. With next ≠ 0 it asks for each row's bytes next
// bytes further first (a distance, not a pointer: it may lead anywhere). Implemented in
// decodestrided_amd64.s.
//
//go:noescape
func decodeF16StridedAVX2Asm(dst *float32, src *byte, blocks, stride, rows, next int)

func decodeF16Strided(dst []float32, src []byte, n, stride int, next []byte) {
	if !implDecodeF16AVX2.on || n%8 != 0 {
		decodeF16StridedGeneric(dst, src, n, stride)
		return
	}
	decodeF16StridedAVX2Asm(&dst[0], &src[0], n/8, stride, len(dst)/n, distance(src, next))
}

// distance is how many bytes next starts after src, 0 when next is empty (no rows to ask
// for): the strided decoders' hint, an address difference the kernels add to src.
func distance(src, next []byte) int {
	if len(next) == 0 {
		return 0
	}
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(next))) - uintptr(unsafe.Pointer(unsafe.SliceData(src))))
}
