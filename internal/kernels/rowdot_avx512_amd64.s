//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The four-row Q4_0 dot with AVX-512F (rowdot_amd64.go): the values are decoded sixteen at
// a time in ZMM registers with the same exact operations as the AVX2 kernels
// (rowdot_amd64.s), multiplied by the inputs (VMULPS, x first), and the sixteen products,
// which are two consecutive groups of eight, are added to the row's eight lanes low half
// first, then high half: Dot's order, never fused. Only Z0..Z15 are used, so that
// VEX-encoded additions reach every register they need. It prefetches the next four rows
// as it goes, like the AVX2 kernels (see rowdot_amd64.s). (Q8_0 weight rows take a
// quantized input instead: DotQ8_0Q8, q8input_avx512_amd64.s.)

// q4Levels: the sixteen Q4_0 levels q−8 = −8..7 as float32, exact.
DATA q4Levels<>+0(SB)/4, $-8.0
DATA q4Levels<>+4(SB)/4, $-7.0
DATA q4Levels<>+8(SB)/4, $-6.0
DATA q4Levels<>+12(SB)/4, $-5.0
DATA q4Levels<>+16(SB)/4, $-4.0
DATA q4Levels<>+20(SB)/4, $-3.0
DATA q4Levels<>+24(SB)/4, $-2.0
DATA q4Levels<>+28(SB)/4, $-1.0
DATA q4Levels<>+32(SB)/4, $0.0
DATA q4Levels<>+36(SB)/4, $1.0
DATA q4Levels<>+40(SB)/4, $2.0
DATA q4Levels<>+44(SB)/4, $3.0
DATA q4Levels<>+48(SB)/4, $4.0
DATA q4Levels<>+52(SB)/4, $5.0
DATA q4Levels<>+56(SB)/4, $6.0
DATA q4Levels<>+60(SB)/4, $7.0
GLOBL q4Levels<>(SB), RODATA|NOPTR, $64

// QSCALE16 sets the sixteen lanes of Z to the fp16 scale at M as float32 (Y is Z's low half).
#define QSCALE16(M, Y, Z) \
	VPBROADCASTW M, Y; \
	VCVTPH2PS    Y, Z

// ADD16 adds the sixteen products in Z (low half Y) to the eight lanes ACC: the low eight
// first, then the high eight (extracted into U).
#define ADD16(Z, Y, U, ACC) \
	VEXTRACTF64X4 $1, Z, U; \
	VADDPS        Y, ACC, ACC; \
	VADDPS        U, ACC, ACC

// Q4ROW16 adds the current block of the Q4_0 row at R (block offset BX) to the lanes ACC.
// The block's sixteen possible values float32(k−8)·d, k = 0..15, are computed into Z5 with
// one VMULPS (the levels are in Z15), and VPERMPS, which reads only the low four bits of
// each index, looks the values up: the bytes themselves index the low nibbles (values
// 0..15), the bytes shifted right by four the high nibbles (values 16..31). The inputs are
// in Z8 and Z9; Z4, Z5, Z6, Z7, Y10, Y11 are scratch.
#define Q4ROW16(R, ACC) \
	QSCALE16((R)(BX*1), Y4, Z4); \
	VMULPS    Z4, Z15, Z5; \
	VPMOVZXBD 2(R)(BX*1), Z6; \
	VPERMPS   Z5, Z6, Z7; \
	VPSRLD    $4, Z6, Z6; \
	VPERMPS   Z5, Z6, Z6; \
	VMULPS    Z7, Z8, Z7; \
	VMULPS    Z6, Z9, Z6; \
	ADD16(Z7, Y7, Y10, ACC); \
	ADD16(Z6, Y6, Y11, ACC)

// func dotQ4_0x4AVX512(out *float32, w *byte, x *float32, nb int)
//
// Rows at SI, R8, R9, R10 (18·nb bytes apart); BX is the byte offset of the current block
// in each row, R12 the same offset plus 4·18·nb (the next four rows, prefetched); DI walks
// the input. Lanes of row k in Yk.
TEXT ·dotQ4_0x4AVX512(SB), NOSPLIT, $0-32
	MOVQ    out+0(FP), DX
	MOVQ    w+8(FP), SI
	MOVQ    x+16(FP), DI
	MOVQ    nb+24(FP), CX
	IMUL3Q  $18, CX, R11
	LEAQ    (SI)(R11*1), R8
	LEAQ    (R8)(R11*1), R9
	LEAQ    (R9)(R11*1), R10
	VMOVUPS q4Levels<>(SB), Z15
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	XORQ    BX, BX
	LEAQ   (R11*4), R12

loop:
	PREFETCHT1 (SI)(R12*1)
	PREFETCHT1 (R8)(R12*1)
	PREFETCHT1 (R9)(R12*1)
	PREFETCHT1 (R10)(R12*1)
	ADDQ       $18, R12
	VMOVUPS (DI), Z8
	VMOVUPS 64(DI), Z9
	Q4ROW16(SI, Y0)
	Q4ROW16(R8, Y1)
	Q4ROW16(R9, Y2)
	Q4ROW16(R10, Y3)
	ADDQ    $18, BX
	ADDQ    $128, DI
	DECQ    CX
	JNZ     loop

	REDUCE8(Y0, X0, X8)
	REDUCE8(Y1, X1, X9)
	REDUCE8(Y2, X2, X10)
	REDUCE8(Y3, X3, X11)
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	VZEROUPPER
	RET
