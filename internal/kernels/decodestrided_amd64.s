//go:build amd64 && !purego

#include "textflag.h"
#include "nextrow_amd64.h"

// func decodeF16StridedAVX2Asm(dst *float32, src *byte, blocks, stride, rows, next int)
//
// For each of rows rows: widens 8·blocks halves at src to float32 at dst, eight per
// VCVTPH2PS (exact), then moves src on by stride bytes; dst runs on continuously. With next
// ≠ 0 it first asks for the row's 16·blocks bytes next bytes further into L2 (NEXTROW).
TEXT ·decodeF16StridedAVX2Asm(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), BX
	MOVQ stride+24(FP), DX
	MOVQ rows+32(FP), R8
	MOVQ next+40(FP), R10
	MOVQ BX, R12
	SHLQ $4, R12 // the bytes of a row

row:
	NEXTROW(pfrow, pfdone)
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
