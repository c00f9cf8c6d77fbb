//go:build amd64 && !purego

#include "textflag.h"
#include "axpy_amd64.h"

// AXPY8 updates eight elements at byte offset OFF: dst = dst + float32(a·x), with Y0 = a
// broadcast; the product has a as its first factor and the sum dst as its first addend, as
// in the Go expression dst[i] += float32(a * x[i]). P and D are scratch.
#define AXPY8(OFF, P, D) \
	VMULPS  OFF(SI)(AX*1), Y0, P; \
	VMOVUPS OFF(DI)(AX*1), D; \
	VADDPS  P, D, D; \
	VMOVUPS D, OFF(DI)(AX*1)

// func axpyAVXAsm(dst *float32, a float32, x *float32, n int)
//
// dst at DI, x at SI, AX the byte offset, BX and CX loop limits in bytes.
TEXT ·axpyAVXAsm(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	VBROADCASTSS a+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX
	SHLQ         $2, CX
	XORQ         AX, AX

	// Blocks of 32 elements (128 bytes).
	MOVQ CX, BX
	ANDQ $-128, BX
	JZ   blocks8

loop32:
	AXPY8(0, Y1, Y2)
	AXPY8(32, Y3, Y4)
	AXPY8(64, Y5, Y6)
	AXPY8(96, Y7, Y8)
	ADDQ $128, AX
	CMPQ AX, BX
	JNE  loop32

blocks8:
	// Blocks of 8 elements (32 bytes).
	MOVQ CX, BX
	ANDQ $-32, BX
	CMPQ AX, BX
	JEQ  tail

loop8:
	AXPY8(0, Y1, Y2)
	ADDQ $32, AX
	CMPQ AX, BX
	JNE  loop8

tail:
	// The last n%8 elements, one at a time.
	CMPQ AX, CX
	JEQ  done

loop1:
	VMOVSS (SI)(AX*1), X1
	VMULSS X1, X0, X1
	VMOVSS (DI)(AX*1), X2
	VADDSS X1, X2, X2
	VMOVSS X2, (DI)(AX*1)
	ADDQ   $4, AX
	CMPQ   AX, CX
	JNE    loop1

done:
	VZEROUPPER
	RET

// ROWSTEP adds float32(a_t·x_t) to the accumulator ACC for the eight columns at byte
// offset OFF of row t (x_t at R9), Y0 = a_t broadcast, P scratch: VMULPS then VADDPS with
// the accumulator as the first addend, axpyAVXAsm's arithmetic.
#define ROWSTEP(OFF, P, ACC) \
	VMULPS OFF(R9), Y0, P; \
	VADDPS P, ACC, ACC

// The row's part of the chunk: the same byte offset as dst's.
#define ROWAT32 LEAQ (DX)(BX*1), R9

#define ROW64STEPS \
	ROWSTEP(0, Y9, Y1); \
	ROWSTEP(32, Y10, Y2); \
	ROWSTEP(64, Y11, Y3); \
	ROWSTEP(96, Y12, Y4); \
	ROWSTEP(128, Y13, Y5); \
	ROWSTEP(160, Y14, Y6); \
	ROWSTEP(192, Y15, Y7); \
	ROWSTEP(224, Y9, Y8)

#define ROW8STEP ROWSTEP(0, Y9, Y1)

// func axpyRowsAVXAsm(dst, a, x *float32, n, stride, rows int)
//
// dst at DI, a at SI, x at DX; CX = n and R13 = stride in bytes, R8 = rows (AXPYROWS).
TEXT ·axpyRowsAVXAsm(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	MOVQ stride+32(FP), R13
	SHLQ $2, R13
	MOVQ rows+40(FP), R8
	AXPYROWS(ROWAT32, ROW64STEPS, ROW8STEP)
