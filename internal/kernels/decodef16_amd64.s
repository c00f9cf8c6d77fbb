//go:build amd64 && !purego

#include "textflag.h"

// func decodeF16AVX2Asm(dst *float32, src *byte, blocks int)
//
// Widens 8·blocks halves at src to float32 at dst, eight per VCVTPH2PS (exact). blocks > 0.
TEXT ·decodeF16AVX2Asm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX

decodef16:
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       decodef16
	VZEROUPPER
	RET
