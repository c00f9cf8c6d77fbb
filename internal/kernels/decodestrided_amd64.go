//go:build amd64 && !purego

package kernels

// decodeF16StridedAVX2Asm widens rows rows of 8·blocks halves, the rows stride bytes apart
// at src, to float32 rows of 8·blocks values one after another at dst (VCVTPH2PS, as
// decodeF16AVX2Asm). rows > 0, blocks > 0. Implemented in decodestrided_amd64.s.
//
//go:noescape
func decodeF16StridedAVX2Asm(dst *float32, src *byte, blocks, stride, rows int)

func decodeF16Strided(dst []float32, src []byte, n, stride int) {
	if !implDecodeF16AVX2.on || n%8 != 0 {
		decodeF16StridedGeneric(dst, src, n, stride)
		return
	}
	decodeF16StridedAVX2Asm(&dst[0], &src[0], n/8, stride, len(dst)/n)
}
