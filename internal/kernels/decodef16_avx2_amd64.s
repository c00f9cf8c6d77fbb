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

// func encodeF16AVX2Asm(dst *byte, src *float32, blocks int)
//
// Rounds 8·blocks floats at src to halves at dst, eight per VCVTPS2PH with the rounding
// given in the instruction (0: to nearest, ties to even; MXCSR's flush-to-zero does not
// apply to it). blocks > 0.
TEXT ·encodeF16AVX2Asm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX

encodef16:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, X0
	VMOVDQU   X0, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       encodef16
	VZEROUPPER
	RET
