//go:build amd64 && !purego

#include "textflag.h"

// F16STEP adds float32(a_t·x_t) to the accumulator ACC for the eight columns at byte
// offset OFF of row t of halves (at R9), Y0 = a_t broadcast, P scratch: the halves widened
// by VCVTPH2PS (exact), then VMULPS and VADDPS with the accumulator as the first addend,
// axpyRowsAVXAsm's arithmetic.
#define F16STEP(OFF, P, ACC) \
	VCVTPH2PS OFF(R9), P; \
	VMULPS    P, Y0, P; \
	VADDPS    P, ACC, ACC

// func axpyF16RowsAVX2Asm(dst, a *float32, x *byte, n, stride, rows int)
//
// dst at DI, a at SI, x at DX; CX = n·4 (dst's bytes), R13 = stride in bytes, R8 = rows,
// BX the chunk's byte offset in dst (half of it in a row of x), R9 the current row's
// chunk, R10 the rows left, R12 the row index.
TEXT ·axpyF16RowsAVX2Asm(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	MOVQ stride+32(FP), R13
	MOVQ rows+40(FP), R8
	XORQ BX, BX

	// Chunks of 64 columns (256 bytes of dst, 128 of a row), eight accumulators.
	MOVQ CX, R11
	ANDQ $-256, R11
	JZ   chunks8

chunk64:
	VMOVUPS (DI)(BX*1), Y1
	VMOVUPS 32(DI)(BX*1), Y2
	VMOVUPS 64(DI)(BX*1), Y3
	VMOVUPS 96(DI)(BX*1), Y4
	VMOVUPS 128(DI)(BX*1), Y5
	VMOVUPS 160(DI)(BX*1), Y6
	VMOVUPS 192(DI)(BX*1), Y7
	VMOVUPS 224(DI)(BX*1), Y8
	MOVQ    BX, R9
	SHRQ    $1, R9
	ADDQ    DX, R9
	XORQ    R12, R12
	MOVQ    R8, R10

rows64:
	VBROADCASTSS (SI)(R12*4), Y0
	F16STEP(0, Y9, Y1)
	F16STEP(16, Y10, Y2)
	F16STEP(32, Y11, Y3)
	F16STEP(48, Y12, Y4)
	F16STEP(64, Y13, Y5)
	F16STEP(80, Y14, Y6)
	F16STEP(96, Y15, Y7)
	F16STEP(112, Y9, Y8)
	ADDQ R13, R9
	INCQ R12
	DECQ R10
	JNZ  rows64

	VMOVUPS Y1, (DI)(BX*1)
	VMOVUPS Y2, 32(DI)(BX*1)
	VMOVUPS Y3, 64(DI)(BX*1)
	VMOVUPS Y4, 96(DI)(BX*1)
	VMOVUPS Y5, 128(DI)(BX*1)
	VMOVUPS Y6, 160(DI)(BX*1)
	VMOVUPS Y7, 192(DI)(BX*1)
	VMOVUPS Y8, 224(DI)(BX*1)
	ADDQ    $256, BX
	CMPQ    BX, R11
	JNE     chunk64

chunks8:
	// Chunks of 8 columns (32 bytes of dst, 16 of a row), one accumulator.
	CMPQ BX, CX
	JEQ  rowsdone

chunk8:
	VMOVUPS (DI)(BX*1), Y1
	MOVQ    BX, R9
	SHRQ    $1, R9
	ADDQ    DX, R9
	XORQ    R12, R12
	MOVQ    R8, R10

rows8:
	VBROADCASTSS (SI)(R12*4), Y0
	F16STEP(0, Y9, Y1)
	ADDQ R13, R9
	INCQ R12
	DECQ R10
	JNZ  rows8

	VMOVUPS Y1, (DI)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, CX
	JNE     chunk8

rowsdone:
	VZEROUPPER
	RET
