//go:build amd64 && !purego

#include "textflag.h"

// AxpyRows in ZMM registers: Axpy has no lanes to keep, every element is its own sum, so
// sixteen columns go in one register (Zen 5's datapaths are 512 bits wide). Each row's
// step is axpyRowsAVXAsm's: VMULPS of the broadcast weight and the row, then VADDPS with
// the accumulator as the first addend.

// ZROWSTEP adds float32(a_t·x_t) to ACC for the sixteen columns at byte offset OFF of row
// t (at R9), Z0 = a_t broadcast, P scratch.
#define ZROWSTEP(OFF, P, ACC) \
	VMULPS OFF(R9), Z0, P; \
	VADDPS P, ACC, ACC

// func axpyRowsAVX512Asm(dst, a, x *float32, n, stride, rows int)
//
// n is a positive multiple of 16, rows > 0. dst at DI, a at SI, x at DX; CX = n·4 and
// R13 = stride·4 (bytes), R8 = rows; BX is dst's offset of the current chunk of 64 (in
// Z1-Z4) or 16 (Z1) columns, loaded once, updated by every row in order and stored once;
// R9 walks the chunk down the rows, R12 counts them and R10 counts down.
TEXT ·axpyRowsAVX512Asm(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	MOVQ stride+32(FP), R13
	SHLQ $2, R13
	MOVQ rows+40(FP), R8
	XORQ BX, BX
	MOVQ CX, R11
	ANDQ $-256, R11
	JZ   chunks16

chunk64:
	VMOVUPS (DI)(BX*1), Z1
	VMOVUPS 64(DI)(BX*1), Z2
	VMOVUPS 128(DI)(BX*1), Z3
	VMOVUPS 192(DI)(BX*1), Z4
	LEAQ    (DX)(BX*1), R9
	XORQ    R12, R12
	MOVQ    R8, R10

rows64:
	VBROADCASTSS (SI)(R12*4), Z0
	ZROWSTEP(0, Z5, Z1)
	ZROWSTEP(64, Z6, Z2)
	ZROWSTEP(128, Z7, Z3)
	ZROWSTEP(192, Z8, Z4)
	ADDQ         R13, R9
	INCQ         R12
	DECQ         R10
	JNZ          rows64
	VMOVUPS      Z1, (DI)(BX*1)
	VMOVUPS      Z2, 64(DI)(BX*1)
	VMOVUPS      Z3, 128(DI)(BX*1)
	VMOVUPS      Z4, 192(DI)(BX*1)
	ADDQ         $256, BX
	CMPQ         BX, R11
	JNE          chunk64

chunks16:
	CMPQ BX, CX
	JEQ  done

chunk16:
	VMOVUPS (DI)(BX*1), Z1
	LEAQ    (DX)(BX*1), R9
	XORQ    R12, R12
	MOVQ    R8, R10

rows16:
	VBROADCASTSS (SI)(R12*4), Z0
	ZROWSTEP(0, Z5, Z1)
	ADDQ         R13, R9
	INCQ         R12
	DECQ         R10
	JNZ          rows16
	VMOVUPS      Z1, (DI)(BX*1)
	ADDQ         $64, BX
	CMPQ         BX, CX
	JNE          chunk16

done:
	VZEROUPPER
	RET
