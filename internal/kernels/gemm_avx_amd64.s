//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The prefill block of gemm_amd64.go for 256-bit vectors: two weight rows against six
// input vectors, twelve dot products in twelve YMM accumulators, each with Dot's exact
// lane arithmetic (VMULPS then VADDPS, input first, never fused). Only AVX instructions
// are used.
// With the two multiplier and two adder pipes of current x86 cores, twelve independent
// chains keep all four busy: per block of eight columns two row loads, the six inputs,
// twelve multiplies and twelve additions (STEP2x6). The six inputs come packed by packInputs (their
// blocks of eight side by side, one stream instead of six) and in chunks of columns that
// stay in L1 (gemmChunk): unpacked whole rows of 2048 columns came from L2 at every pair
// of rows, 65 cpu-GFLOP/s against 86 for the same product packed in chunks of 512 (Zen 4).

// STORE2 reduces the accumulators of rows 0 and 1 of one input (A and B, whose low halves
// are XA and XB) and stores them side by side at R9.
#define STORE2(A, XA, B, XB) \
	REDUCE8(A, XA, X12); \
	REDUCE8(B, XB, X13); \
	VMOVSS XA, (R9); \
	VMOVSS XB, 4(R9)

// STEP2x6 is one block of eight columns: the rows' blocks at WO(SI)(CX*1) and
// WO(R8)(CX*1) into Y12 and Y13, the six inputs' packed blocks at O(DI); (row k, input j)
// accumulates in Y(6k+j); Y15 holds the products. Inputs 0-2 are loaded into Y14 once for
// both rows; inputs 3-5 are memory operands of both multiplies: a load folded into the
// multiply is one macro-op on AMD cores, so the block is 29 of them (32 with every input
// in a register, which kept the six-wide dispatch as busy as the four pipes) for 11 loads
// (14 with every input a memory operand, more than two 256-bit loads a cycle). One thread
// on Zen 4, cpu-GFLOP/s, four alternating runs each: 768×768 by 512 inputs 86–89 → 87–93,
// 2048×5632 by 128 77–80 → 80–82; one to five inputs in registers did as well as three,
// six (with the loop below) 77–78 at 2048×5632.
#define STEP2x6(WO, O) \
	VMOVUPS WO(SI)(CX*1), Y12; \
	VMOVUPS WO(R8)(CX*1), Y13; \
	VMOVUPS O(DI), Y14; \
	MULADD(Y14, Y12, Y15, Y0); \
	MULADD(Y14, Y13, Y15, Y6); \
	VMOVUPS O+32(DI), Y14; \
	MULADD(Y14, Y12, Y15, Y1); \
	MULADD(Y14, Y13, Y15, Y7); \
	VMOVUPS O+64(DI), Y14; \
	MULADD(Y14, Y12, Y15, Y2); \
	MULADD(Y14, Y13, Y15, Y8); \
	VMULPS  O+96(DI), Y12, Y15; \
	VADDPS  Y15, Y3, Y3; \
	VMULPS  O+96(DI), Y13, Y15; \
	VADDPS  Y15, Y9, Y9; \
	VMULPS  O+128(DI), Y12, Y15; \
	VADDPS  Y15, Y4, Y4; \
	VMULPS  O+128(DI), Y13, Y15; \
	VADDPS  Y15, Y10, Y10; \
	VMULPS  O+160(DI), Y12, Y15; \
	VADDPS  Y15, Y5, Y5; \
	VMULPS  O+160(DI), Y13, Y15; \
	VADDPS  Y15, Y11, Y11

// STEP2x4 is STEP2x6 for four inputs: (row k, input j) accumulates in Y(4k+j); inputs 0-1
// in Y14, inputs 2-3 as memory operands (a probe of the block: 1.08 cycles a pair of
// multiplies, 1.19 with every input in a register).
#define STEP2x4(WO, O) \
	VMOVUPS WO(SI)(CX*1), Y12; \
	VMOVUPS WO(R8)(CX*1), Y13; \
	VMOVUPS O(DI), Y14; \
	MULADD(Y14, Y12, Y15, Y0); \
	MULADD(Y14, Y13, Y15, Y4); \
	VMOVUPS O+32(DI), Y14; \
	MULADD(Y14, Y12, Y15, Y1); \
	MULADD(Y14, Y13, Y15, Y5); \
	VMULPS  O+64(DI), Y12, Y15; \
	VADDPS  Y15, Y2, Y2; \
	VMULPS  O+64(DI), Y13, Y15; \
	VADDPS  Y15, Y6, Y6; \
	VMULPS  O+96(DI), Y12, Y15; \
	VADDPS  Y15, Y3, Y3; \
	VMULPS  O+96(DI), Y13, Y15; \
	VADDPS  Y15, Y7, Y7

// ZERO2x6, LOAD2x6, STORE2x6 and REDUCE2x6 start, load, store and finish the twelve
// accumulators Y0-Y11 of gemm2x6AVX; the 2x4 forms the eight Y0-Y7 of gemm2x4AVX.
#define ZERO2x6 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

#define LOAD2x6 \
	VMOVUPS 0(DX), Y0; \
	VMOVUPS 32(DX), Y1; \
	VMOVUPS 64(DX), Y2; \
	VMOVUPS 96(DX), Y3; \
	VMOVUPS 128(DX), Y4; \
	VMOVUPS 160(DX), Y5; \
	VMOVUPS 192(DX), Y6; \
	VMOVUPS 224(DX), Y7; \
	VMOVUPS 256(DX), Y8; \
	VMOVUPS 288(DX), Y9; \
	VMOVUPS 320(DX), Y10; \
	VMOVUPS 352(DX), Y11

#define STORE2x6 \
	VMOVUPS Y0, 0(DX); \
	VMOVUPS Y1, 32(DX); \
	VMOVUPS Y2, 64(DX); \
	VMOVUPS Y3, 96(DX); \
	VMOVUPS Y4, 128(DX); \
	VMOVUPS Y5, 160(DX); \
	VMOVUPS Y6, 192(DX); \
	VMOVUPS Y7, 224(DX); \
	VMOVUPS Y8, 256(DX); \
	VMOVUPS Y9, 288(DX); \
	VMOVUPS Y10, 320(DX); \
	VMOVUPS Y11, 352(DX)

#define REDUCE2x6 \
	MOVQ AX, R9; \
	STORE2(Y0, X0, Y6, X6); \
	ADDQ R13, R9; \
	STORE2(Y1, X1, Y7, X7); \
	ADDQ R13, R9; \
	STORE2(Y2, X2, Y8, X8); \
	ADDQ R13, R9; \
	STORE2(Y3, X3, Y9, X9); \
	ADDQ R13, R9; \
	STORE2(Y4, X4, Y10, X10); \
	ADDQ R13, R9; \
	STORE2(Y5, X5, Y11, X11)

#define ZERO2x4 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

#define LOAD2x4 \
	VMOVUPS 0(DX), Y0; \
	VMOVUPS 32(DX), Y1; \
	VMOVUPS 64(DX), Y2; \
	VMOVUPS 96(DX), Y3; \
	VMOVUPS 128(DX), Y4; \
	VMOVUPS 160(DX), Y5; \
	VMOVUPS 192(DX), Y6; \
	VMOVUPS 224(DX), Y7

#define STORE2x4 \
	VMOVUPS Y0, 0(DX); \
	VMOVUPS Y1, 32(DX); \
	VMOVUPS Y2, 64(DX); \
	VMOVUPS Y3, 96(DX); \
	VMOVUPS Y4, 128(DX); \
	VMOVUPS Y5, 160(DX); \
	VMOVUPS Y6, 192(DX); \
	VMOVUPS Y7, 224(DX)

#define REDUCE2x4 \
	MOVQ AX, R9; \
	STORE2(Y0, X0, Y4, X4); \
	ADDQ R13, R9; \
	STORE2(Y1, X1, Y5, X5); \
	ADDQ R13, R9; \
	STORE2(Y2, X2, Y6, X6); \
	ADDQ R13, R9; \
	STORE2(Y3, X3, Y7, X7)

// GEMM2ROWS is the body of gemm2x6AVX and gemm2x4AVX, for input groups of XBYTES bytes a
// block: STEP, ZERO, LOAD, STORE and REDUCE are the group's macros, ACCBYTES its
// accumulators' bytes, the L* its labels. R12 counts the pairs of rows left, R10 is the row
// stride in bytes, R15 the pair's first row, AX the pair's first output, R13 the output
// stride in bytes, DX the pair's accumulators, R14 the flags. The inputs' chunk stays in
// L1 while the pairs of rows stream past it.
#define GEMM2ROWS(STEP, ZERO, LOAD, STORE, REDUCE, XBYTES, ACCBYTES, LTILE, LLOAD, LBLOCKS, LPAIRS, LDONE, LREDUCE, LNEXT) \
	MOVQ       tiles+40(FP), R12; \
	MOVQ       out+0(FP), AX; \
	MOVQ       w+16(FP), SI; \
	MOVQ       stride+48(FP), R10; \
	SHLQ       $2, R10; \
	MOVQ       outStride+8(FP), R13; \
	SHLQ       $2, R13; \
	MOVQ       acc+56(FP), DX; \
	MOVQ       flags+64(FP), R14; \
LTILE: \
	MOVQ       SI, R15; \
	LEAQ       (SI)(R10*1), R8; \
	LEAQ       (SI)(R10*2), BX; \
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
	SHLQ       $5, CX; \
	ADDQ       CX, SI; \
	ADDQ       CX, R8; \
	ADDQ       CX, BX; \
	LEAQ       (BX)(R10*1), R11; \
	NEGQ       CX; \
	TESTQ      $32, CX; \
	JZ         LPAIRS; \
	STEP(0, 0); \
	ADDQ       $XBYTES, DI; \
	ADDQ       $32, CX; \
	JZ         LDONE; \
LPAIRS: \
	PREFETCHT1 (BX)(CX*1); \
	PREFETCHT1 (R11)(CX*1); \
	STEP(0, 0); \
	STEP(32, XBYTES); \
	ADDQ       $(2*XBYTES), DI; \
	ADDQ       $64, CX; \
	JNZ        LPAIRS; \
LDONE: \
	LEAQ       (R15)(R10*2), SI; \
	TESTQ      $2, R14; \
	JZ         LREDUCE; \
	STORE; \
	JMP        LNEXT; \
LREDUCE: \
	REDUCE; \
LNEXT: \
	ADDQ       $ACCBYTES, DX; \
	ADDQ       $8, AX; \
	DECQ       R12; \
	JNZ        LTILE; \
	VZEROUPPER

// func gemm2x6AVX(out *float32, outStride int, w *float32, xp *float32, n, tiles, stride int, acc *float32, flags int)
//
// For each of tiles pairs of rows (rows stride floats apart, the pairs one after the other
// from w): the two rows against six input vectors packed by packInputs at xp (48 floats
// per block of eight columns), over n columns (a positive multiple of 8) from w and xp,
// which may be one chunk of longer rows. The twelve accumulators of a pair start at zero,
// or with gemmAccLoad in flags from its twelve eight-lane vectors at acc (96 floats per
// pair, the pairs in order); with gemmAccStore they are stored back there, so that the
// next chunk of columns carries on every lane's sum; otherwise REDUCE8 finishes each one
// and row 2t+k of input j goes to out[j·outStride + 2t + k]. SI, R8 (this pair's rows) and
// BX, R11 (the next pair's, read into L2 meanwhile) point past the chunk's end and CX runs
// from -4n bytes up to zero, so one register steps all four; an odd block goes first, then
// two blocks per iteration.
TEXT ·gemm2x6AVX(SB), NOSPLIT, $0-72
	GEMM2ROWS(STEP2x6, ZERO2x6, LOAD2x6, STORE2x6, REDUCE2x6, 192, 384, t6tile, t6load, t6blocks, t6pairs, t6done, t6reduce, t6next)
	RET

// func gemm2x4AVX(out *float32, outStride int, w *float32, xp *float32, n, tiles, stride int, acc *float32, flags int)
//
// gemm2x6AVX for four input vectors packed by packInputs (32 floats per block of eight
// columns), eight accumulators (64 floats per pair at acc).
TEXT ·gemm2x4AVX(SB), NOSPLIT, $0-72
	GEMM2ROWS(STEP2x4, ZERO2x4, LOAD2x4, STORE2x4, REDUCE2x4, 128, 256, t4tile, t4load, t4blocks, t4pairs, t4done, t4reduce, t4next)
	RET

// func packInputsAVX(dst, x *float32, cols, n int)
//
// For every block of eight columns b (cols a positive multiple of 8), the n > 0 vectors'
// blocks (cols floats apart from x) one after the other at dst: vector j's at
// dst[n·b+8j:].
TEXT ·packInputsAVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ cols+16(FP), CX
	MOVQ CX, R9
	SHLQ $2, R9 // the vectors' stride in bytes
	SHRQ $3, CX
	MOVQ n+24(FP), R10

packblock:
	MOVQ DI, R8
	MOVQ R10, DX

packvector:
	VMOVUPS (R8), Y0
	VMOVUPS Y0, (SI)
	ADDQ    $32, SI
	ADDQ    R9, R8
	DECQ    DX
	JNZ     packvector
	ADDQ    $32, DI
	DECQ    CX
	JNZ     packblock
	VZEROUPPER
	RET
