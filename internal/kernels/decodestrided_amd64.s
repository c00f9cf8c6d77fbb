//go:build amd64 && !purego

#include "textflag.h"

// func decodeF16StridedAVX2Asm(dst *float32, src *byte, blocks, stride, rows int)
//
// For each of rows rows: widens 8·blocks halves at src to float32 at dst, eight per
// VCVTPH2PS (exact), then moves src on by stride bytes; dst runs on continuously.
TEXT ·decodeF16StridedAVX2Asm(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), BX
	MOVQ stride+24(FP), DX
	MOVQ rows+32(FP), R8

row:
	MOVQ SI, R9
	MOVQ BX, CX

blocks:
	VCVTPH2PS (R9), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, R9
	ADDQ      $32, DI
	DECQ      CX
	JNZ       blocks
	ADDQ      DX, SI
	DECQ      R8
	JNZ       row
	VZEROUPPER
	RET
