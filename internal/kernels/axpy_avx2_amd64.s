//go:build amd64 && !purego

#include "textflag.h"
#include "axpy_amd64.h"

// F16STEP adds float32(a_t·x_t) to the accumulator ACC for the eight columns at byte
// offset OFF of row t of halves (at R9), Y0 = a_t broadcast, P scratch: the halves widened
// by VCVTPH2PS (exact), then VMULPS and VADDPS with the accumulator as the first addend,
// axpyRowsAVXAsm's arithmetic.
#define F16STEP(OFF, P, ACC) \
	VCVTPH2PS OFF(R9), P; \
	VMULPS    P, Y0, P; \
	VADDPS    P, ACC, ACC

// The row's part of the chunk: half dst's byte offset (two bytes a value, not four).
#define ROWAT16 \
	MOVQ BX, R9; \
	SHRQ $1, R9; \
	ADDQ DX, R9

#define F16ROW64STEPS \
	F16STEP(0, Y9, Y1); \
	F16STEP(16, Y10, Y2); \
	F16STEP(32, Y11, Y3); \
	F16STEP(48, Y12, Y4); \
	F16STEP(64, Y13, Y5); \
	F16STEP(80, Y14, Y6); \
	F16STEP(96, Y15, Y7); \
	F16STEP(112, Y9, Y8)

#define F16ROW8STEP F16STEP(0, Y9, Y1)

// func axpyF16RowsAVX2Asm(dst, a *float32, x *byte, n, stride, rows int)
//
// dst at DI, a at SI, x at DX; CX = n·4 (dst's bytes), R13 = stride in bytes, R8 = rows
// (AXPYROWS).
TEXT ·axpyF16RowsAVX2Asm(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	MOVQ stride+32(FP), R13
	MOVQ rows+40(FP), R8
	AXPYROWS(ROWAT16, F16ROW64STEPS, F16ROW8STEP)

// F16ROW64NEXT is F16ROW64STEPS after prefetching the row's 64 halves at R14 bytes from
// it into L2 (the same slot of the next cache block).
#define F16ROW64NEXT \
	PREFETCHT1 (R9)(R14*1); \
	PREFETCHT1 64(R9)(R14*1); \
	F16ROW64STEPS

// func axpyF16RowsNextAVX2Asm(dst, a *float32, x *byte, n, stride, rows, next int)
//
// axpyF16RowsAVX2Asm (the same arithmetic) that, with each row's chunk of 64 columns,
// prefetches the bytes next bytes further into L2 (PREFETCHT1): attention's values of one
// head of a cache block, whose next block lies anywhere in the pool. A prefetch never
// faults, so next may point anywhere.
TEXT ·axpyF16RowsNextAVX2Asm(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	MOVQ stride+32(FP), R13
	MOVQ rows+40(FP), R8
	MOVQ next+48(FP), R14
	AXPYROWS(ROWAT16, F16ROW64NEXT, F16ROW8STEP)
