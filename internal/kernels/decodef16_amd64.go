//go:build amd64 && !purego

package kernels

// decodeF16AVX2Asm widens 8·blocks halves at src into dst (VCVTPH2PS). Implemented in
// decodef16_avx2_amd64.s.
//
//go:noescape
func decodeF16AVX2Asm(dst *float32, src *byte, blocks int)

func decodeF16(dst []float32, src []byte) {
	if implDecodeF16AVX2.on && len(dst) >= 8 {
		blocks := len(dst) / 8
		decodeF16AVX2Asm(&dst[0], &src[0], blocks)
		dst, src = dst[8*blocks:], src[16*blocks:]
	}
	decodeF16Generic(dst, src)
}

// encodeF16AVX2Asm rounds 8·blocks floats at src to halves at dst (VCVTPS2PH, round to
// nearest even). Implemented in decodef16_avx2_amd64.s.
//
//go:noescape
func encodeF16AVX2Asm(dst *byte, src *float32, blocks int)

func encodeF16(dst []byte, src []float32) {
	if implDecodeF16AVX2.on && len(src) >= 8 {
		blocks := len(src) / 8
		encodeF16AVX2Asm(&dst[0], &src[0], blocks)
		dst, src = dst[16*blocks:], src[8*blocks:]
	}
	encodeF16Generic(dst, src)
}
