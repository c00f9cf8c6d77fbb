//go:build amd64 && !purego

package kernels

import "github.com/kvref/kvref/internal/half"

// decodeQ8_0StridedAVX2Asm decodes rows rows of nb Q8_0 blocks, the rows stride bytes
// apart at src, to float32 rows of 32·nb values one after another at dst: VPBROADCASTW and
// VCVTPH2PS for the scale, VPMOVSXBD and VCVTDQ2PS for eight values (both exact), VMULPS.
// rows > 0, nb > 0. With next ≠ 0 it asks for each row's bytes next bytes further first (a
// distance, not a pointer: it may lead anywhere). Implemented in decodeq8_amd64.s.
//
//go:noescape
func decodeQ8_0StridedAVX2Asm(dst *float32, src *byte, nb, stride, rows, next int)

// decodeQ8_0StridedAVX512Asm is decodeQ8_0StridedAVX2Asm in ZMM registers, the scales
// looked up in table (half.F16Table) and broadcast by the load. Implemented in
// decodeq8_amd64.s.
//
//go:noescape
func decodeQ8_0StridedAVX512Asm(dst *float32, src *byte, nb, stride, rows, next int, table *float32)

func decodeQ8_0Strided(dst []float32, src []byte, nb, stride int, next []byte) {
	rows := len(dst) / (QBlockLen * nb)
	switch {
	case implDecodeQ8_0AVX512.on:
		decodeQ8_0StridedAVX512Asm(&dst[0], &src[0], nb, stride, rows, distance(src, next), &half.F16Table[0])
	case implDecodeQ8_0AVX2.on:
		decodeQ8_0StridedAVX2Asm(&dst[0], &src[0], nb, stride, rows, distance(src, next))
	default:
		decodeQ8_0StridedGeneric(dst, src, nb, stride)
	}
}
