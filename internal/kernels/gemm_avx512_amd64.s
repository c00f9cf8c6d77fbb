//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The prefill block of gemm_amd64.go for 512-bit vectors: four weight rows against eight
// input vectors, 32 dot products in sixteen ZMM accumulators, two eight-lane sums per
// register, each with Dot's exact lane arithmetic.

// STEP8x4 is one block of eight columns: the four packed input pairs at XO(DI) in Z0..Z3,
// each row's eight weights (at WO from its row pointer) broadcast to both halves, then
// sixteen VMULPS and sixteen VADDPS, input first, never fused.
#define STEP8x4(WO, XO) \
	VMOVUPS XO(DI), Z0; \
	VMOVUPS XO+64(DI), Z1; \
	VMOVUPS XO+128(DI), Z2; \
	VMOVUPS XO+192(DI), Z3; \
	VBROADCASTF64X4 WO(SI), Z4; \
	MULADD(Z0, Z4, Z8, Z16); \
	MULADD(Z1, Z4, Z9, Z17); \
	MULADD(Z2, Z4, Z10, Z18); \
	MULADD(Z3, Z4, Z11, Z19); \
	VBROADCASTF64X4 WO(SI)(R9*1), Z5; \
	MULADD(Z0, Z5, Z8, Z20); \
	MULADD(Z1, Z5, Z9, Z21); \
	MULADD(Z2, Z5, Z10, Z22); \
	MULADD(Z3, Z5, Z11, Z23); \
	VBROADCASTF64X4 WO(SI)(R9*2), Z6; \
	MULADD(Z0, Z6, Z8, Z24); \
	MULADD(Z1, Z6, Z9, Z25); \
	MULADD(Z2, Z6, Z10, Z26); \
	MULADD(Z3, Z6, Z11, Z27); \
	VBROADCASTF64X4 WO(R8), Z7; \
	MULADD(Z0, Z7, Z8, Z28); \
	MULADD(Z1, Z7, Z9, Z29); \
	MULADD(Z2, Z7, Z10, Z30); \
	MULADD(Z3, Z7, Z11, Z31)

// func gemm4x8AVX512(out *float32, outStride int, w *float32, xp *float32, n, tiles int)
//
// For each of tiles groups of four weight rows (n floats each, the groups one after the
// other from w): the four rows against eight input vectors packed in pairs by
// packPairs8AVX512 into xp, over n columns (a positive multiple of 8). The accumulators
// Z16..Z31 hold (row k, input 2p) in the low half and (row k, input 2p+1) in the high half
// of Z(16+4k+p), as in dot4x4AVX512; per block of eight columns: four packed pairs (one
// 64-byte load each), each row's block broadcast to both halves, sixteen VMULPS and
// sixteen VADDPS. At the end the 32 sums are reduced together in REDUCE8's order (HALVES4,
// SUM8x4) and row 4t+k of input j goes to out[j·outStride + 4t + k]. The inputs stay in
// the caches while the groups of rows stream past them. R12 counts the groups left, R9 is
// the row stride in bytes, AX the group's first output.
TEXT ·gemm4x8AVX512(SB), NOSPLIT, $0-48
	MOVQ tiles+40(FP), R12
	MOVQ out+0(FP), AX
	MOVQ w+16(FP), SI
	MOVQ n+32(FP), R9
	SHLQ $2, R9
	MOVQ outStride+8(FP), R10
	SHLQ $2, R10

tile:
	MOVQ   xp+24(FP), DI
	LEAQ   (SI)(R9*2), R8
	ADDQ   R9, R8
	LEAQ   (SI)(R9*4), BX // the next group's rows 0 and 1: (BX), (BX)(R9*1)
	LEAQ   (BX)(R9*2), DX // its rows 2 and 3: (DX), (DX)(R9*1)
	MOVQ   R9, CX
	SHRQ   $5, CX
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

	// An odd block first, then two blocks per iteration.
	TESTQ $1, CX
	JZ    pairs
	STEP8x4(0, 0)
	ADDQ  $32, SI
	ADDQ  $32, R8
	ADDQ  $32, BX
	ADDQ  $32, DX
	ADDQ  $256, DI
	SUBQ  $1, CX
	JZ    done

pairs:
	// The next group of rows is read into L2 while this one is multiplied: a weight
	// matrix streamed from memory in four rows at a time is too short a stream for the
	// hardware prefetcher to follow.
	PREFETCHT1 (BX)
	PREFETCHT1 (BX)(R9*1)
	PREFETCHT1 (DX)
	PREFETCHT1 (DX)(R9*1)
	STEP8x4(0, 0)
	STEP8x4(32, 256)
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, BX
	ADDQ $64, DX
	ADDQ $512, DI
	SUBQ $2, CX
	JNZ  pairs

done:
	// SI has walked a row: it now points at the next group's first row, three rows on.
	// Row 4t+k of input j goes to out[j*outStride+4t+k]; R11 steps over the inputs.
	LEAQ (SI)(R9*2), SI
	ADDQ R9, SI
	MOVQ AX, R11
	HALVES4(Z16, Z20, Z24, Z28, Z6)
	HALVES4(Z17, Z21, Z25, Z29, Z7)
	SUM8x4(Z6, Z7, Z8)
	HALVES4(Z18, Z22, Z26, Z30, Z6)
	HALVES4(Z19, Z23, Z27, Z31, Z7)
	SUM8x4(Z6, Z7, Z9)
	VMOVUPS       X8, (R11)
	VEXTRACTF32X4 $1, Z8, (R11)(R10*1)
	LEAQ          (R11)(R10*2), R11
	VEXTRACTF32X4 $2, Z8, (R11)
	VEXTRACTF32X4 $3, Z8, (R11)(R10*1)
	LEAQ          (R11)(R10*2), R11
	VMOVUPS       X9, (R11)
	VEXTRACTF32X4 $1, Z9, (R11)(R10*1)
	LEAQ          (R11)(R10*2), R11
	VEXTRACTF32X4 $2, Z9, (R11)
	VEXTRACTF32X4 $3, Z9, (R11)(R10*1)
	ADDQ          $16, AX
	DECQ          R12
	JNZ           tile
	VZEROUPPER
	RET
