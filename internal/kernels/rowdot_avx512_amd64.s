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

// The four-row, four-input kernels (dotF16x4x4AVX512, dotBF16x4x4AVX512) are the AVX2
// two-input ones (rowdot_amd64.s) for four input vectors side by side (at DI, R12, R13,
// R14, n floats apart): the rows' eight values are decoded once for the four into Y0-Y3,
// the inputs' into Y4-Y7, and the lanes of (row k, input j) are in Y(16+4j+k), the sixteen
// registers AVX-512 VL adds (only the additions into them need its encoding). The rows
// are consecutive (2n bytes apart), so the next four are one stream of 8n bytes from R11,
// asked for in L2 a line per group of eight values.

// ROW4X4GROUP adds eight values of each row times each input to their lanes.
#define ROW4X4GROUP(LOAD) \
	PREFETCHT1 (R11)(AX*8); \
	LOAD((SI)(AX*2), Y0); \
	LOAD((R8)(AX*2), Y1); \
	LOAD((R9)(AX*2), Y2); \
	LOAD((R10)(AX*2), Y3); \
	VMOVUPS    (DI)(AX*4), Y4; \
	VMOVUPS    (R12)(AX*4), Y5; \
	VMOVUPS    (R13)(AX*4), Y6; \
	VMOVUPS    (R14)(AX*4), Y7; \
	MULADD(Y4, Y0, Y8, Y16); \
	MULADD(Y4, Y1, Y9, Y17); \
	MULADD(Y4, Y2, Y10, Y18); \
	MULADD(Y4, Y3, Y11, Y19); \
	MULADD(Y5, Y0, Y8, Y20); \
	MULADD(Y5, Y1, Y9, Y21); \
	MULADD(Y5, Y2, Y10, Y22); \
	MULADD(Y5, Y3, Y11, Y23); \
	MULADD(Y6, Y0, Y8, Y24); \
	MULADD(Y6, Y1, Y9, Y25); \
	MULADD(Y6, Y2, Y10, Y26); \
	MULADD(Y6, Y3, Y11, Y27); \
	MULADD(Y7, Y0, Y8, Y28); \
	MULADD(Y7, Y1, Y9, Y29); \
	MULADD(Y7, Y2, Y10, Y30); \
	MULADD(Y7, Y3, Y11, Y31)

// ROW4X4STORE reduces one input's four rows (lanes in A, B, C, D) in Dot's order and
// stores them at DX (ROW4END on copies in Y0-Y3).
#define ROW4X4STORE(A, B, C, D) \
	VMOVAPS A, Y0; \
	VMOVAPS B, Y1; \
	VMOVAPS C, Y2; \
	VMOVAPS D, Y3; \
	ROW4END

// ROW4X4 is the whole of a four-row, four-input kernel: the arguments, the loop (label L),
// then input j's four results at out + 4·j·outStride bytes.
#define ROW4X4(LOAD, L) \
	MOVQ   out+0(FP), DX; \
	MOVQ   w+16(FP), SI; \
	MOVQ   x+24(FP), DI; \
	MOVQ   n+32(FP), CX; \
	LEAQ   (SI)(CX*2), R8; \
	LEAQ   (R8)(CX*2), R9; \
	LEAQ   (R9)(CX*2), R10; \
	LEAQ   (R10)(CX*2), R11; \
	LEAQ   (DI)(CX*4), R12; \
	LEAQ   (R12)(CX*4), R13; \
	LEAQ   (R13)(CX*4), R14; \
	VPXORD Y16, Y16, Y16; \
	VPXORD Y17, Y17, Y17; \
	VPXORD Y18, Y18, Y18; \
	VPXORD Y19, Y19, Y19; \
	VPXORD Y20, Y20, Y20; \
	VPXORD Y21, Y21, Y21; \
	VPXORD Y22, Y22, Y22; \
	VPXORD Y23, Y23, Y23; \
	VPXORD Y24, Y24, Y24; \
	VPXORD Y25, Y25, Y25; \
	VPXORD Y26, Y26, Y26; \
	VPXORD Y27, Y27, Y27; \
	VPXORD Y28, Y28, Y28; \
	VPXORD Y29, Y29, Y29; \
	VPXORD Y30, Y30, Y30; \
	VPXORD Y31, Y31, Y31; \
	XORQ   AX, AX; \
L: \
	ROW4X4GROUP(LOAD); \
	ADDQ   $8, AX; \
	CMPQ   AX, CX; \
	JNE    L; \
	MOVQ   outStride+8(FP), BX; \
	SHLQ   $2, BX; \
	ROW4X4STORE(Y16, Y17, Y18, Y19); \
	ADDQ   BX, DX; \
	ROW4X4STORE(Y20, Y21, Y22, Y23); \
	ADDQ   BX, DX; \
	ROW4X4STORE(Y24, Y25, Y26, Y27); \
	ADDQ   BX, DX; \
	ROW4X4STORE(Y28, Y29, Y30, Y31); \
	VZEROUPPER

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

// func dotF16x4x4AVX512(out *float32, outStride int, w *byte, x *float32, n int)
//
// n > 0 is a multiple of 8; the four rows are consecutive (2n bytes each), the four inputs
// too (n floats each); row k of input j goes to out[j·outStride + k].
TEXT ·dotF16x4x4AVX512(SB), NOSPLIT, $0-40
	ROW4X4(F16LOAD, loop)
	RET

// func dotBF16x4x4AVX512(out *float32, outStride int, w *byte, x *float32, n int)
//
// As dotF16x4x4AVX512, for bfloat16 rows.
TEXT ·dotBF16x4x4AVX512(SB), NOSPLIT, $0-40
	ROW4X4(BF16LOAD, loop)
	RET
