//go:build amd64 && !purego

#include "textflag.h"

// The small-batch products of gemm_amd64.go for CPUs with AVX-512 VL, in 256-bit registers:
// four weight rows against six (or four) input vectors, 24 (16) dot products in 24 (16) of
// the 32 YMM registers, each with Dot's exact lane arithmetic (VMULPS then VADDPS, input
// first, never fused), as gemm2x6AVX does for two rows with the 16 registers of AVX2.
// On Zen 4 the broadcast of a row's eight weights to both halves of a ZMM register
// (gemm4x8AVX512) takes a slot of the multiply or add pipes: a block of gemm4x8AVX512's
// sixteen multiplies and sixteen additions took 20.3 cycles where the pipes allow 16 (the
// same block with plain loads 16.1). Here every load is a plain 256-bit one: a block of
// STEP4x6 (four row loads, six input loads, 24 multiplies, 24 additions) ran at 12.1
// cycles, the pipes' limit of 12. The inputs come packed (packInputs, their blocks of eight
// side by side) and in chunks of columns that stay in L1, with the accumulators carried
// from chunk to chunk through acc, as in gemm2x6AVX.

// REDUCE8V is REDUCE8 (avx_amd64.h) in EVEX forms, for the registers Y16-Y31: the eight
// lanes of Y (low half X) summed as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) into the low
// element of X; T is an X register, clobbered.
#define REDUCE8V(Y, X, T) \
	VEXTRACTF32X4 $1, Y, T; \
	VADDPS        T, X, X; \
	VMOVHLPS      X, X, T; \
	VADDPS        T, X, X; \
	VMOVSHDUP     X, T; \
	VADDSS        T, X, X

// ROWS4 loads the four rows' blocks of eight at WO(SI), WO(R8), WO(R9), WO(R11) into
// Y0-Y3.
#define ROWS4(WO) \
	VMOVUPS WO(SI), Y0; \
	VMOVUPS WO(R8), Y1; \
	VMOVUPS WO(R9), Y2; \
	VMOVUPS WO(R11), Y3

// INPUT4 loads one input's packed block at M into Y4, multiplies it by the four rows
// (products in Y5 and Y6, alternately) and adds the products to the rows' accumulators
// A, B, C, D.
#define INPUT4(M, A, B, C, D) \
	VMOVUPS M, Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, A, A; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, B, B; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, C, C; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, D, D

// ZERO4, LOAD4 and STORE4 zero four accumulators, load them from O(DX) and the three
// vectors after it, and store them there.
#define ZERO4(A, B, C, D) \
	VXORPS A, A, A; \
	VXORPS B, B, B; \
	VXORPS C, C, C; \
	VXORPS D, D, D

#define LOAD4(O, A, B, C, D) \
	VMOVUPS O+0(DX), A; \
	VMOVUPS O+32(DX), B; \
	VMOVUPS O+64(DX), C; \
	VMOVUPS O+96(DX), D

#define STORE4(O, A, B, C, D) \
	VMOVUPS A, O+0(DX); \
	VMOVUPS B, O+32(DX); \
	VMOVUPS C, O+64(DX); \
	VMOVUPS D, O+96(DX)

// REDUCE4 finishes one input's four dot products (accumulators A-D, low halves XA-XD) and
// stores them at 0, 4, 8 and 12(R9).
#define REDUCE4(A, B, C, D, XA, XB, XC, XD) \
	REDUCE8V(A, XA, X0); \
	VMOVSS XA, 0(R9); \
	REDUCE8V(B, XB, X0); \
	VMOVSS XB, 4(R9); \
	REDUCE8V(C, XC, X0); \
	VMOVSS XC, 8(R9); \
	REDUCE8V(D, XD, X0); \
	VMOVSS XD, 12(R9)


// STEP4x6 is one block of eight columns: the four rows' blocks at WO(SI), WO(R8), WO(R9),
// WO(R11), then each input's packed block at O+32j(DI), added to (row k, input j)'s
// accumulator Y(8+6k+j).
#define STEP4x6(WO, O) \
	ROWS4(WO); \
	INPUT4(O+0(DI), Y8, Y14, Y20, Y26); \
	INPUT4(O+32(DI), Y9, Y15, Y21, Y27); \
	INPUT4(O+64(DI), Y10, Y16, Y22, Y28); \
	INPUT4(O+96(DI), Y11, Y17, Y23, Y29); \
	INPUT4(O+128(DI), Y12, Y18, Y24, Y30); \
	INPUT4(O+160(DI), Y13, Y19, Y25, Y31)

// ZERO4x6, LOAD4x6 and STORE4x6 zero the 24 accumulators Y8-Y31, load them from
// and store them to DX.
#define ZERO4x6 \
	ZERO4(Y8, Y9, Y10, Y11); \
	ZERO4(Y12, Y13, Y14, Y15); \
	ZERO4(Y16, Y17, Y18, Y19); \
	ZERO4(Y20, Y21, Y22, Y23); \
	ZERO4(Y24, Y25, Y26, Y27); \
	ZERO4(Y28, Y29, Y30, Y31)

#define LOAD4x6 \
	LOAD4(0, Y8, Y9, Y10, Y11); \
	LOAD4(128, Y12, Y13, Y14, Y15); \
	LOAD4(256, Y16, Y17, Y18, Y19); \
	LOAD4(384, Y20, Y21, Y22, Y23); \
	LOAD4(512, Y24, Y25, Y26, Y27); \
	LOAD4(640, Y28, Y29, Y30, Y31)

#define STORE4x6 \
	STORE4(0, Y8, Y9, Y10, Y11); \
	STORE4(128, Y12, Y13, Y14, Y15); \
	STORE4(256, Y16, Y17, Y18, Y19); \
	STORE4(384, Y20, Y21, Y22, Y23); \
	STORE4(512, Y24, Y25, Y26, Y27); \
	STORE4(640, Y28, Y29, Y30, Y31)

// REDUCE4x6 finishes the 24 dot products and stores row k of input j at
// AX + 4k + j·R13 (R9 walks the inputs).
#define REDUCE4x6 \
	MOVQ AX, R9; \
	REDUCE4(Y8, Y14, Y20, Y26, X8, X14, X20, X26); \
	ADDQ R13, R9; \
	REDUCE4(Y9, Y15, Y21, Y27, X9, X15, X21, X27); \
	ADDQ R13, R9; \
	REDUCE4(Y10, Y16, Y22, Y28, X10, X16, X22, X28); \
	ADDQ R13, R9; \
	REDUCE4(Y11, Y17, Y23, Y29, X11, X17, X23, X29); \
	ADDQ R13, R9; \
	REDUCE4(Y12, Y18, Y24, Y30, X12, X18, X24, X30); \
	ADDQ R13, R9; \
	REDUCE4(Y13, Y19, Y25, Y31, X13, X19, X25, X31)

// STEP4x4 is one block of eight columns: the four rows' blocks at WO(SI), WO(R8), WO(R9),
// WO(R11), then each input's packed block at O+32j(DI), added to (row k, input j)'s
// accumulator Y(8+4k+j).
#define STEP4x4(WO, O) \
	ROWS4(WO); \
	INPUT4(O+0(DI), Y8, Y12, Y16, Y20); \
	INPUT4(O+32(DI), Y9, Y13, Y17, Y21); \
	INPUT4(O+64(DI), Y10, Y14, Y18, Y22); \
	INPUT4(O+96(DI), Y11, Y15, Y19, Y23)

// ZERO4x4, LOAD4x4 and STORE4x4 zero the 16 accumulators Y8-Y23, load them from
// and store them to DX.
#define ZERO4x4 \
	ZERO4(Y8, Y9, Y10, Y11); \
	ZERO4(Y12, Y13, Y14, Y15); \
	ZERO4(Y16, Y17, Y18, Y19); \
	ZERO4(Y20, Y21, Y22, Y23)

#define LOAD4x4 \
	LOAD4(0, Y8, Y9, Y10, Y11); \
	LOAD4(128, Y12, Y13, Y14, Y15); \
	LOAD4(256, Y16, Y17, Y18, Y19); \
	LOAD4(384, Y20, Y21, Y22, Y23)

#define STORE4x4 \
	STORE4(0, Y8, Y9, Y10, Y11); \
	STORE4(128, Y12, Y13, Y14, Y15); \
	STORE4(256, Y16, Y17, Y18, Y19); \
	STORE4(384, Y20, Y21, Y22, Y23)

// REDUCE4x4 finishes the 16 dot products and stores row k of input j at
// AX + 4k + j·R13 (R9 walks the inputs).
#define REDUCE4x4 \
	MOVQ AX, R9; \
	REDUCE4(Y8, Y12, Y16, Y20, X8, X12, X16, X20); \
	ADDQ R13, R9; \
	REDUCE4(Y9, Y13, Y17, Y21, X9, X13, X17, X21); \
	ADDQ R13, R9; \
	REDUCE4(Y10, Y14, Y18, Y22, X10, X14, X18, X22); \
	ADDQ R13, R9; \
	REDUCE4(Y11, Y15, Y19, Y23, X11, X15, X19, X23)

// GEMM4ROWS is the body of the kernels below, for input groups of XBYTES bytes a block:
// STEP, ZERO, LOAD, STORE and REDUCE are the group's macros, the L* its labels. R12 counts
// the groups of four rows left, R10 is the row stride in bytes, R15 the group's first row,
// AX its first output, R13 the output stride in bytes, DX its accumulators (ACCBYTES), R14
// the flags; SI, R8, R9 and R11 walk the four rows and BX row 5, from which the next
// group's rows are read into L2.
#define GEMM4ROWS(STEP, ZERO, LOAD, STORE, REDUCE, XBYTES, ACCBYTES, LTILE, LLOAD, LBLOCKS, LPAIRS, LDONE, LREDUCE, LNEXT) \
	MOVQ       tiles+40(FP), R12; \
	MOVQ       out+0(FP), AX; \
	MOVQ       w+16(FP), R15; \
	MOVQ       stride+48(FP), R10; \
	SHLQ       $2, R10; \
	MOVQ       outStride+8(FP), R13; \
	SHLQ       $2, R13; \
	MOVQ       acc+56(FP), DX; \
	MOVQ       flags+64(FP), R14; \
LTILE: \
	MOVQ       R15, SI; \
	LEAQ       (SI)(R10*1), R8; \
	LEAQ       (SI)(R10*2), R9; \
	LEAQ       (R8)(R10*2), R11; \
	LEAQ       (R11)(R10*2), BX; \
	MOVQ       xp+24(FP), DI; \
	MOVQ       n+32(FP), CX; \
	SHRQ       $3, CX; \
	TESTQ      $1, R14; \
	JNZ        LLOAD; \
	ZERO; \
	JMP        LBLOCKS; \
LLOAD: \
	LOAD; \
LBLOCKS: \
	TESTQ      $1, CX; \
	JZ         LPAIRS; \
	STEP(0, 0); \
	ADDQ       $32, SI; \
	ADDQ       $32, R8; \
	ADDQ       $32, R9; \
	ADDQ       $32, R11; \
	ADDQ       $32, BX; \
	ADDQ       $XBYTES, DI; \
	DECQ       CX; \
	JZ         LDONE; \
LPAIRS: \
	PREFETCHT1 (R11)(R10*1); \
	PREFETCHT1 (BX); \
	PREFETCHT1 (BX)(R10*1); \
	PREFETCHT1 (BX)(R10*2); \
	STEP(0, 0); \
	STEP(32, XBYTES); \
	ADDQ       $64, SI; \
	ADDQ       $64, R8; \
	ADDQ       $64, R9; \
	ADDQ       $64, R11; \
	ADDQ       $64, BX; \
	ADDQ       $(2*XBYTES), DI; \
	SUBQ       $2, CX; \
	JNZ        LPAIRS; \
LDONE: \
	LEAQ       (R15)(R10*4), R15; \
	TESTQ      $2, R14; \
	JZ         LREDUCE; \
	STORE; \
	JMP        LNEXT; \
LREDUCE: \
	REDUCE; \
LNEXT: \
	ADDQ       $ACCBYTES, DX; \
	ADDQ       $16, AX; \
	DECQ       R12; \
	JNZ        LTILE; \
	VZEROUPPER

// func gemm4x6AVX512(out *float32, outStride int, w, xp *float32, n, tiles, stride int, acc *float32, flags int)
//
// For each of tiles groups of four rows (rows stride floats apart, the groups one after
// the other from w): the four rows against 6 input vectors packed by packInputs at xp
// (48 floats per block of eight columns), over n columns (a positive multiple of 8) from
// w and xp, which may be one chunk of longer rows. The 24 accumulators of a group start at
// zero, or with gemmAccLoad in flags from their eight-lane vectors at acc (192 floats per
// group, the groups in order); with gemmAccStore they are stored back there for the next
// chunk of columns; otherwise REDUCE8V finishes each one and row 4t+k of input j goes to
// out[j·outStride + 4t + k].
TEXT ·gemm4x6AVX512(SB), NOSPLIT, $0-72
	GEMM4ROWS(STEP4x6, ZERO4x6, LOAD4x6, STORE4x6, REDUCE4x6, 192, 768, g6tile, g6load, g6blocks, g6pairs, g6done, g6reduce, g6next)
	RET

// func gemm4x4AVX512(out *float32, outStride int, w, xp *float32, n, tiles, stride int, acc *float32, flags int)
//
// For each of tiles groups of four rows (rows stride floats apart, the groups one after
// the other from w): the four rows against 4 input vectors packed by packInputs at xp
// (32 floats per block of eight columns), over n columns (a positive multiple of 8) from
// w and xp, which may be one chunk of longer rows. The 16 accumulators of a group start at
// zero, or with gemmAccLoad in flags from their eight-lane vectors at acc (128 floats per
// group, the groups in order); with gemmAccStore they are stored back there for the next
// chunk of columns; otherwise REDUCE8V finishes each one and row 4t+k of input j goes to
// out[j·outStride + 4t + k].
TEXT ·gemm4x4AVX512(SB), NOSPLIT, $0-72
	GEMM4ROWS(STEP4x4, ZERO4x4, LOAD4x4, STORE4x4, REDUCE4x4, 128, 512, g4tile, g4load, g4blocks, g4pairs, g4done, g4reduce, g4next)
	RET
