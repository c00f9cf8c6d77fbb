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

// STEP4x6 is one block of eight columns: the four rows' blocks at WO(SI), WO(R8), WO(R9),
// WO(R11) into Y0-Y3, then each input's packed block at O+32j(DI) into Y4, multiplied by
// the four rows (products in Y5 and Y6) and added to (row k, input j)'s accumulator
// Y(8+6k+j).
#define STEP4x6(WO, O) \
	VMOVUPS WO(SI), Y0; \
	VMOVUPS WO(R8), Y1; \
	VMOVUPS WO(R9), Y2; \
	VMOVUPS WO(R11), Y3; \
	VMOVUPS O+0(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y8, Y8; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y14, Y14; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y20, Y20; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y26, Y26; \
	VMOVUPS O+32(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y9, Y9; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y15, Y15; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y21, Y21; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y27, Y27; \
	VMOVUPS O+64(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y10, Y10; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y16, Y16; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y22, Y22; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y28, Y28; \
	VMOVUPS O+96(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y11, Y11; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y17, Y17; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y23, Y23; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y29, Y29; \
	VMOVUPS O+128(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y12, Y12; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y18, Y18; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y24, Y24; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y30, Y30; \
	VMOVUPS O+160(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y13, Y13; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y19, Y19; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y25, Y25; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y31, Y31

// ZERO4x6, LOAD4x6 and STORE4x6 zero the 24 accumulators Y8-Y31, load them from
// and store them to DX.
#define ZERO4x6 \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11; \
	VXORPS Y12, Y12, Y12; \
	VXORPS Y13, Y13, Y13; \
	VXORPS Y14, Y14, Y14; \
	VXORPS Y15, Y15, Y15; \
	VXORPS Y16, Y16, Y16; \
	VXORPS Y17, Y17, Y17; \
	VXORPS Y18, Y18, Y18; \
	VXORPS Y19, Y19, Y19; \
	VXORPS Y20, Y20, Y20; \
	VXORPS Y21, Y21, Y21; \
	VXORPS Y22, Y22, Y22; \
	VXORPS Y23, Y23, Y23; \
	VXORPS Y24, Y24, Y24; \
	VXORPS Y25, Y25, Y25; \
	VXORPS Y26, Y26, Y26; \
	VXORPS Y27, Y27, Y27; \
	VXORPS Y28, Y28, Y28; \
	VXORPS Y29, Y29, Y29; \
	VXORPS Y30, Y30, Y30; \
	VXORPS Y31, Y31, Y31

#define LOAD4x6 \
	VMOVUPS 0(DX), Y8; \
	VMOVUPS 32(DX), Y9; \
	VMOVUPS 64(DX), Y10; \
	VMOVUPS 96(DX), Y11; \
	VMOVUPS 128(DX), Y12; \
	VMOVUPS 160(DX), Y13; \
	VMOVUPS 192(DX), Y14; \
	VMOVUPS 224(DX), Y15; \
	VMOVUPS 256(DX), Y16; \
	VMOVUPS 288(DX), Y17; \
	VMOVUPS 320(DX), Y18; \
	VMOVUPS 352(DX), Y19; \
	VMOVUPS 384(DX), Y20; \
	VMOVUPS 416(DX), Y21; \
	VMOVUPS 448(DX), Y22; \
	VMOVUPS 480(DX), Y23; \
	VMOVUPS 512(DX), Y24; \
	VMOVUPS 544(DX), Y25; \
	VMOVUPS 576(DX), Y26; \
	VMOVUPS 608(DX), Y27; \
	VMOVUPS 640(DX), Y28; \
	VMOVUPS 672(DX), Y29; \
	VMOVUPS 704(DX), Y30; \
	VMOVUPS 736(DX), Y31

#define STORE4x6 \
	VMOVUPS Y8, 0(DX); \
	VMOVUPS Y9, 32(DX); \
	VMOVUPS Y10, 64(DX); \
	VMOVUPS Y11, 96(DX); \
	VMOVUPS Y12, 128(DX); \
	VMOVUPS Y13, 160(DX); \
	VMOVUPS Y14, 192(DX); \
	VMOVUPS Y15, 224(DX); \
	VMOVUPS Y16, 256(DX); \
	VMOVUPS Y17, 288(DX); \
	VMOVUPS Y18, 320(DX); \
	VMOVUPS Y19, 352(DX); \
	VMOVUPS Y20, 384(DX); \
	VMOVUPS Y21, 416(DX); \
	VMOVUPS Y22, 448(DX); \
	VMOVUPS Y23, 480(DX); \
	VMOVUPS Y24, 512(DX); \
	VMOVUPS Y25, 544(DX); \
	VMOVUPS Y26, 576(DX); \
	VMOVUPS Y27, 608(DX); \
	VMOVUPS Y28, 640(DX); \
	VMOVUPS Y29, 672(DX); \
	VMOVUPS Y30, 704(DX); \
	VMOVUPS Y31, 736(DX)

// REDUCE4x6 finishes the 24 dot products and stores row k of input j at
// AX + 4k + j·R13 (R9 walks the inputs).
#define REDUCE4x6 \
	MOVQ AX, R9; \
	REDUCE8V(Y8, X8, X0); \
	VMOVSS X8, 0(R9); \
	REDUCE8V(Y14, X14, X0); \
	VMOVSS X14, 4(R9); \
	REDUCE8V(Y20, X20, X0); \
	VMOVSS X20, 8(R9); \
	REDUCE8V(Y26, X26, X0); \
	VMOVSS X26, 12(R9); \
	ADDQ R13, R9; \
	REDUCE8V(Y9, X9, X0); \
	VMOVSS X9, 0(R9); \
	REDUCE8V(Y15, X15, X0); \
	VMOVSS X15, 4(R9); \
	REDUCE8V(Y21, X21, X0); \
	VMOVSS X21, 8(R9); \
	REDUCE8V(Y27, X27, X0); \
	VMOVSS X27, 12(R9); \
	ADDQ R13, R9; \
	REDUCE8V(Y10, X10, X0); \
	VMOVSS X10, 0(R9); \
	REDUCE8V(Y16, X16, X0); \
	VMOVSS X16, 4(R9); \
	REDUCE8V(Y22, X22, X0); \
	VMOVSS X22, 8(R9); \
	REDUCE8V(Y28, X28, X0); \
	VMOVSS X28, 12(R9); \
	ADDQ R13, R9; \
	REDUCE8V(Y11, X11, X0); \
	VMOVSS X11, 0(R9); \
	REDUCE8V(Y17, X17, X0); \
	VMOVSS X17, 4(R9); \
	REDUCE8V(Y23, X23, X0); \
	VMOVSS X23, 8(R9); \
	REDUCE8V(Y29, X29, X0); \
	VMOVSS X29, 12(R9); \
	ADDQ R13, R9; \
	REDUCE8V(Y12, X12, X0); \
	VMOVSS X12, 0(R9); \
	REDUCE8V(Y18, X18, X0); \
	VMOVSS X18, 4(R9); \
	REDUCE8V(Y24, X24, X0); \
	VMOVSS X24, 8(R9); \
	REDUCE8V(Y30, X30, X0); \
	VMOVSS X30, 12(R9); \
	ADDQ R13, R9; \
	REDUCE8V(Y13, X13, X0); \
	VMOVSS X13, 0(R9); \
	REDUCE8V(Y19, X19, X0); \
	VMOVSS X19, 4(R9); \
	REDUCE8V(Y25, X25, X0); \
	VMOVSS X25, 8(R9); \
	REDUCE8V(Y31, X31, X0); \
	VMOVSS X31, 12(R9)

// STEP4x4 is one block of eight columns: the four rows' blocks at WO(SI), WO(R8), WO(R9),
// WO(R11) into Y0-Y3, then each input's packed block at O+32j(DI) into Y4, multiplied by
// the four rows (products in Y5 and Y6) and added to (row k, input j)'s accumulator
// Y(8+4k+j).
#define STEP4x4(WO, O) \
	VMOVUPS WO(SI), Y0; \
	VMOVUPS WO(R8), Y1; \
	VMOVUPS WO(R9), Y2; \
	VMOVUPS WO(R11), Y3; \
	VMOVUPS O+0(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y8, Y8; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y12, Y12; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y16, Y16; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y20, Y20; \
	VMOVUPS O+32(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y9, Y9; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y13, Y13; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y17, Y17; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y21, Y21; \
	VMOVUPS O+64(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y10, Y10; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y14, Y14; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y18, Y18; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y22, Y22; \
	VMOVUPS O+96(DI), Y4; \
	VMULPS  Y0, Y4, Y5; \
	VADDPS  Y5, Y11, Y11; \
	VMULPS  Y1, Y4, Y6; \
	VADDPS  Y6, Y15, Y15; \
	VMULPS  Y2, Y4, Y5; \
	VADDPS  Y5, Y19, Y19; \
	VMULPS  Y3, Y4, Y6; \
	VADDPS  Y6, Y23, Y23

// ZERO4x4, LOAD4x4 and STORE4x4 zero the 16 accumulators Y8-Y23, load them from
// and store them to DX.
#define ZERO4x4 \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11; \
	VXORPS Y12, Y12, Y12; \
	VXORPS Y13, Y13, Y13; \
	VXORPS Y14, Y14, Y14; \
	VXORPS Y15, Y15, Y15; \
	VXORPS Y16, Y16, Y16; \
	VXORPS Y17, Y17, Y17; \
	VXORPS Y18, Y18, Y18; \
	VXORPS Y19, Y19, Y19; \
	VXORPS Y20, Y20, Y20; \
	VXORPS Y21, Y21, Y21; \
	VXORPS Y22, Y22, Y22; \
	VXORPS Y23, Y23, Y23

#define LOAD4x4 \
	VMOVUPS 0(DX), Y8; \
	VMOVUPS 32(DX), Y9; \
	VMOVUPS 64(DX), Y10; \
	VMOVUPS 96(DX), Y11; \
	VMOVUPS 128(DX), Y12; \
	VMOVUPS 160(DX), Y13; \
	VMOVUPS 192(DX), Y14; \
	VMOVUPS 224(DX), Y15; \
	VMOVUPS 256(DX), Y16; \
	VMOVUPS 288(DX), Y17; \
	VMOVUPS 320(DX), Y18; \
	VMOVUPS 352(DX), Y19; \
	VMOVUPS 384(DX), Y20; \
	VMOVUPS 416(DX), Y21; \
	VMOVUPS 448(DX), Y22; \
	VMOVUPS 480(DX), Y23

#define STORE4x4 \
	VMOVUPS Y8, 0(DX); \
	VMOVUPS Y9, 32(DX); \
	VMOVUPS Y10, 64(DX); \
	VMOVUPS Y11, 96(DX); \
	VMOVUPS Y12, 128(DX); \
	VMOVUPS Y13, 160(DX); \
	VMOVUPS Y14, 192(DX); \
	VMOVUPS Y15, 224(DX); \
	VMOVUPS Y16, 256(DX); \
	VMOVUPS Y17, 288(DX); \
	VMOVUPS Y18, 320(DX); \
	VMOVUPS Y19, 352(DX); \
	VMOVUPS Y20, 384(DX); \
	VMOVUPS Y21, 416(DX); \
	VMOVUPS Y22, 448(DX); \
	VMOVUPS Y23, 480(DX)

// REDUCE4x4 finishes the 16 dot products and stores row k of input j at
// AX + 4k + j·R13 (R9 walks the inputs).
#define REDUCE4x4 \
	MOVQ AX, R9; \
	REDUCE8V(Y8, X8, X0); \
	VMOVSS X8, 0(R9); \
	REDUCE8V(Y12, X12, X0); \
	VMOVSS X12, 4(R9); \
	REDUCE8V(Y16, X16, X0); \
	VMOVSS X16, 8(R9); \
	REDUCE8V(Y20, X20, X0); \
	VMOVSS X20, 12(R9); \
	ADDQ R13, R9; \
	REDUCE8V(Y9, X9, X0); \
	VMOVSS X9, 0(R9); \
	REDUCE8V(Y13, X13, X0); \
	VMOVSS X13, 4(R9); \
	REDUCE8V(Y17, X17, X0); \
	VMOVSS X17, 8(R9); \
	REDUCE8V(Y21, X21, X0); \
	VMOVSS X21, 12(R9); \
	ADDQ R13, R9; \
	REDUCE8V(Y10, X10, X0); \
	VMOVSS X10, 0(R9); \
	REDUCE8V(Y14, X14, X0); \
	VMOVSS X14, 4(R9); \
	REDUCE8V(Y18, X18, X0); \
	VMOVSS X18, 8(R9); \
	REDUCE8V(Y22, X22, X0); \
	VMOVSS X22, 12(R9); \
	ADDQ R13, R9; \
	REDUCE8V(Y11, X11, X0); \
	VMOVSS X11, 0(R9); \
	REDUCE8V(Y15, X15, X0); \
	VMOVSS X15, 4(R9); \
	REDUCE8V(Y19, X19, X0); \
	VMOVSS X19, 8(R9); \
	REDUCE8V(Y23, X23, X0); \
	VMOVSS X23, 12(R9)

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
