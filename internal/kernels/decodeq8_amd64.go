//go:build amd64 && !purego

package kernels

// decodeQ8_0StridedAVX2Asm decodes rows rows of nb Q8_0 blocks, the rows stride bytes
// apart at src, to float32 rows of 32·nb values one after another at dst: VPBROADCASTW and
// VCVTPH2PS for the scale, VPMOVSXBD and VCVTDQ2PS for eight values (both exact), VMULPS.
// rows > 0, nb > 0. With next ≠ 0 it asks for each row's bytes next bytes further first (a
// distance, not a pointer: it may lead anywhere). Implemented in decodeq8_amd64.s.
//
//go:noescape
func decodeQ8_0StridedAVX2Asm(dst *float32, src *byte, nb, stride, rows, next int)

func decodeQ8_0Strided(dst []float32, src []byte, nb, stride int, next []byte) {
	if !implDecodeQ8_0AVX2.on {
		decodeQ8_0StridedGeneric(dst, src, nb, stride)
		return
	}
	decodeQ8_0StridedAVX2Asm(&dst[0], &src[0], nb, stride, len(dst)/(QBlockLen*nb), distance(src, next))
}
