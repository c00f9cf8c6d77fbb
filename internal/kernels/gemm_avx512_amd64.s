//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The prefill blocks of gemm_amd64.go and gemm_avx512_amd64.go for 512-bit vectors, each
// ZMM accumulator holding two eight-lane sums with Dot's exact lane arithmetic.
//
// gemm8x6AVX512 (and gemm8x2AVX512): eight weight rows against six input vectors (two).
// The rows come in pairs (interleavePairsAVX512: rows 2q and 2q+1 side by side, block by
// block) and each input's block twice (packInputsDup), so that one 64-byte load fills a
// register and no weight is broadcast. gemm4x8AVX512: four rows, read where they are,
// against eight inputs packed in pairs, each row's block broadcast to both halves of a
// register (VBROADCASTF64X4), which takes a share of the multiply and add pipes on Zen 4:
// 86-88 cpu-GFLOP/s against 101-105 for gemm8x6AVX512 on a laid-out panel (one thread,
// 768-5632 columns); laying the rows out costs a copy of each row per block of inputs,
// which a small batch does not repay (gemmWide512).

// gemm8x6Perm gathers the eight row sums of two inputs (see STORE8x2) into row order.
DATA gemm8x6Perm<>+0(SB)/4, $0
DATA gemm8x6Perm<>+4(SB)/4, $4
DATA gemm8x6Perm<>+8(SB)/4, $8
DATA gemm8x6Perm<>+12(SB)/4, $12
DATA gemm8x6Perm<>+16(SB)/4, $1
DATA gemm8x6Perm<>+20(SB)/4, $5
DATA gemm8x6Perm<>+24(SB)/4, $9
DATA gemm8x6Perm<>+28(SB)/4, $13
DATA gemm8x6Perm<>+32(SB)/4, $2
DATA gemm8x6Perm<>+36(SB)/4, $6
DATA gemm8x6Perm<>+40(SB)/4, $10
DATA gemm8x6Perm<>+44(SB)/4, $14
DATA gemm8x6Perm<>+48(SB)/4, $3
DATA gemm8x6Perm<>+52(SB)/4, $7
DATA gemm8x6Perm<>+56(SB)/4, $11
DATA gemm8x6Perm<>+60(SB)/4, $15
GLOBL gemm8x6Perm<>(SB), RODATA|NOPTR, $64

// ROWPAIRS8 loads one block of eight columns of the four row pairs (64 bytes each, at WO
// from SI, SI+R9, SI+2·R9, R8) into Z0..Z3.
#define ROWPAIRS8(WO) \
	VMOVUPS WO(SI), Z0; \
	VMOVUPS WO(SI)(R9*1), Z1; \
	VMOVUPS WO(SI)(R9*2), Z2; \
	VMOVUPS WO(R8), Z3

// INPUT8 multiplies the four row pairs in Z0..Z3 by one input's block at XO(DI), loaded
// into both halves of Z4 by LOAD (VMOVUPS of a block packed twice by packInputsDup, or
// VBROADCASTF64X4 of one packed once by packInputBlocks), VMULPS into Z5, VADDPS into
// A0..A3.
#define INPUT8(LOAD, XO, A0, A1, A2, A3) \
	LOAD    XO(DI), Z4; \
	MULADD(Z4, Z0, Z5, A0); \
	MULADD(Z4, Z1, Z5, A1); \
	MULADD(Z4, Z2, Z5, A2); \
	MULADD(Z4, Z3, Z5, A3)

// STEP8x6 is one block of eight columns: the four row pairs, then each input j's block
// (packed twice, at XO+64j) against them, into Z(8+4j+q). STEP8x6B is STEP8x6 for inputs
// packed once (at XO+32j), each block broadcast to both halves.
#define STEP8x6(WO, XO) \
	ROWPAIRS8(WO); \
	INPUT8(VMOVUPS, XO, Z8, Z9, Z10, Z11); \
	INPUT8(VMOVUPS, XO+64, Z12, Z13, Z14, Z15); \
	INPUT8(VMOVUPS, XO+128, Z16, Z17, Z18, Z19); \
	INPUT8(VMOVUPS, XO+192, Z20, Z21, Z22, Z23); \
	INPUT8(VMOVUPS, XO+256, Z24, Z25, Z26, Z27); \
	INPUT8(VMOVUPS, XO+320, Z28, Z29, Z30, Z31)

#define STEP8x6B(WO, XO) \
	ROWPAIRS8(WO); \
	INPUT8(VBROADCASTF64X4, XO, Z8, Z9, Z10, Z11); \
	INPUT8(VBROADCASTF64X4, XO+32, Z12, Z13, Z14, Z15); \
	INPUT8(VBROADCASTF64X4, XO+64, Z16, Z17, Z18, Z19); \
	INPUT8(VBROADCASTF64X4, XO+96, Z20, Z21, Z22, Z23); \
	INPUT8(VBROADCASTF64X4, XO+128, Z24, Z25, Z26, Z27); \
	INPUT8(VBROADCASTF64X4, XO+160, Z28, Z29, Z30, Z31)

// STEP8x2 and STEP8x2B are STEP8x6 and STEP8x6B for two inputs (128 or 64 bytes per block
// at XO(DI)), into Z8..Z15.
#define STEP8x2(WO, XO) \
	ROWPAIRS8(WO); \
	INPUT8(VMOVUPS, XO, Z8, Z9, Z10, Z11); \
	INPUT8(VMOVUPS, XO+64, Z12, Z13, Z14, Z15)

#define STEP8x2B(WO, XO) \
	ROWPAIRS8(WO); \
	INPUT8(VBROADCASTF64X4, XO, Z8, Z9, Z10, Z11); \
	INPUT8(VBROADCASTF64X4, XO+32, Z12, Z13, Z14, Z15)

// PAIRSUMS does the first two steps of REDUCE8 for the eight dot products of one input in
// the accumulators A0..A3 (row pair q in Aq: rows 2q and 2q+1 in its low and high halves,
// eight lanes l0..l7 each, as four-lane chunks c0 = l0..l3, c1 = l4..l7): a_i = l_i +
// l_(i+4), then (a0+a2, a1+a3), leaving P with, per 128-bit chunk k, [row k, row k+4] as
// (b0, b1) pairs. Z0..Z3 are scratch.
#define PAIRSUMS(A0, A1, A2, A3, P) \
	VSHUFF32X4 $0x88, A1, A0, Z0; \
	VSHUFF32X4 $0xdd, A1, A0, Z1; \
	VADDPS     Z1, Z0, Z0; \
	VSHUFF32X4 $0x88, A3, A2, Z2; \
	VSHUFF32X4 $0xdd, A3, A2, Z3; \
	VADDPS     Z3, Z2, Z2; \
	VSHUFPS    $0x44, Z2, Z0, Z1; \
	VSHUFPS    $0xee, Z2, Z0, Z3; \
	VADDPS     Z3, Z1, P

// STORE8x2 finishes REDUCE8 for two inputs whose PAIRSUMS are in P and Q (b0 + b1 for
// each row), puts the eight rows of each in order with Z6's permutation, and stores the
// first input's rows at (R11) under the mask KA and the second's at (R11)(R10*1) under KB
// (a row or an input left out of the mask is not written). Z0, Z1 are scratch.
#define STORE8x2(P, Q, KA, KB) \
	VSHUFPS       $0x88, Q, P, Z0; \
	VSHUFPS       $0xdd, Q, P, Z1; \
	VADDPS        Z1, Z0, Z0; \
	VPERMPS       Z0, Z6, Z1; \
	VMOVUPS       Y1, KA, (R11); \
	VEXTRACTF64X4 $1, Z1, Y0; \
	VMOVUPS       Y0, KB, (R11)(R10*1)

// ZERO8 clears eight accumulators.
#define ZERO8(A, B, C, D, E, F, G, H) \
	VPXORD A, A, A; \
	VPXORD B, B, B; \
	VPXORD C, C, C; \
	VPXORD D, D, D; \
	VPXORD E, E, E; \
	VPXORD F, F, F; \
	VPXORD G, G, G; \
	VPXORD H, H, H

// GEMM8ARGS loads the arguments gemm8x6AVX512 and gemm8x2AVX512 share: the groups left in
// R12, the first output in AX, the panel in SI, a pair's stride (8n bytes) in R9, the
// output stride in bytes in R10, and STORE8x2's permutation in Z6.
#define GEMM8ARGS \
	MOVQ    tiles+40(FP), R12; \
	MOVQ    out+0(FP), AX; \
	MOVQ    panel+16(FP), SI; \
	MOVQ    n+32(FP), R9; \
	SHLQ    $3, R9; \
	MOVQ    outStride+8(FP), R10; \
	SHLQ    $2, R10; \
	VMOVUPS gemm8x6Perm<>(SB), Z6

// TILE8START starts a group of eight rows: R15 keeps its first pair, DI goes back to the
// inputs, R8 points at the fourth pair and CX counts the blocks of eight columns.
#define TILE8START \
	MOVQ SI, R15; \
	MOVQ xd+24(FP), DI; \
	LEAQ (SI)(R9*2), R8; \
	ADDQ R9, R8; \
	MOVQ n+32(FP), CX; \
	SHRQ $3, CX

// PACKINPUTS is the body of packInputsDupAVX512 and packInputBlocksAVX512: for each input
// j < slots, each block of eight columns put at its place by LOAD into V and a store of V
// (PLACE bytes a block: SHIFT = log2(PLACE)), zeros (Z, cleared) for j ≥ k. DI walks the
// current input's places (R10 = PLACE·slots bytes apart), SI its blocks, DX counts inputs,
// BX blocks; INPUT, BLOCK, ZEROS and DONE are the labels.
#define PACKINPUTS(SHIFT, LOAD, V, Z, INPUT, BLOCK, ZEROS, DONE) \
	MOVQ   dst+0(FP), DI; \
	MOVQ   x+8(FP), SI; \
	MOVQ   cols+16(FP), CX; \
	MOVQ   k+24(FP), R8; \
	MOVQ   slots+32(FP), R9; \
	MOVQ   R9, R10; \
	SHLQ   $SHIFT, R10; \
	VPXORD Z, Z, Z; \
	XORQ   DX, DX; \
INPUT: \
	CMPQ DX, R9; \
	JEQ  DONE; \
	MOVQ DX, AX; \
	SHLQ $SHIFT, AX; \
	LEAQ (DI)(AX*1), R11; \
	MOVQ CX, BX; \
	SHRQ $3, BX; \
	CMPQ DX, R8; \
	JAE  ZEROS; \
BLOCK: \
	LOAD    (SI), V; \
	VMOVUPS V, (R11); \
	ADDQ    $32, SI; \
	ADDQ    R10, R11; \
	DECQ    BX; \
	JNZ     BLOCK; \
	INCQ    DX; \
	JMP     INPUT; \
ZEROS: \
	VMOVUPS Z, (R11); \
	ADDQ    R10, R11; \
	DECQ    BX; \
	JNZ     ZEROS; \
	INCQ    DX; \
	JMP     INPUT; \
DONE: \
	VZEROUPPER; \
	RET

// GEMM8BLOCKS runs STEP over a group's blocks of eight columns (CX of them), an odd block
// first, then two per iteration (labels PAIRS and DONE; XB and XB2 the packed inputs' bytes
// of one block and of two), and leaves SI at the next group's first pair and the group's
// first output in R11.
#define GEMM8BLOCKS(STEP, XB, XB2, PAIRS, DONE) \
	TESTQ $1, CX; \
	JZ    PAIRS; \
	STEP(0, 0); \
	ADDQ  $64, SI; \
	ADDQ  $64, R8; \
	ADDQ  $XB, DI; \
	SUBQ  $1, CX; \
	JZ    DONE; \
PAIRS: \
	STEP(0, 0); \
	STEP(64, XB); \
	ADDQ $128, SI; \
	ADDQ $128, R8; \
	ADDQ $XB2, DI; \
	SUBQ $2, CX; \
	JNZ  PAIRS; \
DONE: \
	LEAQ (R15)(R9*4), SI; \
	MOVQ AX, R11

// GEMM8X6 is the body of gemm8x6AVX512 and gemm8x6BAVX512: STEP one block of eight columns
// (STEP8x6 or STEP8x6B), XB and XB2 the packed inputs' bytes of one block and of two, TILE,
// PAIRS and DONE the labels.
#define GEMM8X6(STEP, XB, XB2, TILE, PAIRS, DONE) \
	GEMM8ARGS; \
	MOVQ  mask+48(FP), R11; \
	KMOVW R11, K1; \
TILE: \
	TILE8START; \
	ZERO8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15); \
	ZERO8(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23); \
	ZERO8(Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31); \
	GEMM8BLOCKS(STEP, XB, XB2, PAIRS, DONE); \
	PAIRSUMS(Z8, Z9, Z10, Z11, Z4); \
	PAIRSUMS(Z12, Z13, Z14, Z15, Z5); \
	STORE8x2(Z4, Z5, K1, K1); \
	LEAQ (R11)(R10*2), R11; \
	PAIRSUMS(Z16, Z17, Z18, Z19, Z4); \
	PAIRSUMS(Z20, Z21, Z22, Z23, Z5); \
	STORE8x2(Z4, Z5, K1, K1); \
	LEAQ (R11)(R10*2), R11; \
	PAIRSUMS(Z24, Z25, Z26, Z27, Z4); \
	PAIRSUMS(Z28, Z29, Z30, Z31, Z5); \
	STORE8x2(Z4, Z5, K1, K1); \
	ADDQ $32, AX; \
	DECQ R12; \
	JNZ  TILE; \
	VZEROUPPER; \
	RET

// GEMM8X2 is the body of gemm8x2AVX512 and gemm8x2BAVX512 (STEP: STEP8x2 or STEP8x2B; the
// rest as GEMM8X6's).
#define GEMM8X2(STEP, XB, XB2, TILE, PAIRS, DONE) \
	GEMM8ARGS; \
	MOVQ  mask0+48(FP), R11; \
	KMOVW R11, K1; \
	MOVQ  mask1+56(FP), R11; \
	KMOVW R11, K2; \
TILE: \
	TILE8START; \
	ZERO8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15); \
	GEMM8BLOCKS(STEP, XB, XB2, PAIRS, DONE); \
	PAIRSUMS(Z8, Z9, Z10, Z11, Z4); \
	PAIRSUMS(Z12, Z13, Z14, Z15, Z5); \
	STORE8x2(Z4, Z5, K1, K2); \
	ADDQ $32, AX; \
	DECQ R12; \
	JNZ  TILE; \
	VZEROUPPER; \
	RET

// func gemm8x6AVX512(out *float32, outStride int, panel *float32, xd *float32, n, tiles, mask int)
//
// For each of tiles groups of eight rows laid out in pairs by interleavePairs (pair q of a
// group: 2n floats, rows 2q and 2q+1 block by block), one group after the other from
// panel: the eight rows against six input vectors duplicated by packInputsDup into xd (96
// floats per block of eight columns: input j's block twice), over n columns (a positive
// multiple of 8). Accumulator Z(8+4j+q) holds rows 2q and 2q+1 against input j; per block
// four row-pair loads, six input loads, 24 VMULPS and 24 VADDPS. At the end the 48 sums
// are reduced in REDUCE8's order and row 8t+k of input j goes to out[j·outStride + 8t + k]
// for the rows k set in mask (0xff: all eight). R12 counts the groups left, R9 is a pair's
// stride in bytes (8n), R15 the group's first pair, AX its first output, R10 the output
// stride in bytes, K1 the mask.
TEXT ·gemm8x6AVX512(SB), NOSPLIT, $0-56
	GEMM8X6(STEP8x6, 384, 768, tile6, pairs6, done6)

// func gemm8x6BAVX512(out *float32, outStride int, panel *float32, xb *float32, n, tiles, mask int)
//
// gemm8x6AVX512 for six inputs packed once by packInputBlocks (48 floats per block of eight
// columns), each input's block broadcast to both halves of a register (VBROADCASTF64X4 from
// memory): half the bytes of inputs read per block.
TEXT ·gemm8x6BAVX512(SB), NOSPLIT, $0-56
	GEMM8X6(STEP8x6B, 192, 384, tile6b, pairs6b, done6b)

// func gemm8x2AVX512(out *float32, outStride int, panel *float32, xd *float32, n, tiles, mask0, mask1 int)
//
// gemm8x6AVX512 for two inputs (32 floats per block of xd), the rows of input 0 stored
// under mask0 and those of input 1 under mask1 (0: input 1 is padding, nothing stored).
TEXT ·gemm8x2AVX512(SB), NOSPLIT, $0-64
	GEMM8X2(STEP8x2, 128, 256, tile2, pairs2, done2)

// func gemm8x2BAVX512(out *float32, outStride int, panel *float32, xb *float32, n, tiles, mask0, mask1 int)
//
// gemm8x2AVX512 for two inputs packed once by packInputBlocks (16 floats per block of xb).
TEXT ·gemm8x2BAVX512(SB), NOSPLIT, $0-64
	GEMM8X2(STEP8x2B, 64, 128, tile2b, pairs2b, done2b)

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
	ZERO16TO31

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

// func interleavePairsAVX512(dst, a, b *float32, n int)
//
// interleavePairs for n > 0 columns (a multiple of 8): a's block of eight and b's side by
// side, 64 bytes of dst per block.
TEXT ·interleavePairsAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX

interleave:
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     interleave
	VZEROUPPER
	RET

// func packInputsDupAVX512(dst, x *float32, cols, k, slots int)
//
// packInputsDupGeneric for cols > 0 (a multiple of 8): for each input j < slots, each
// block of eight columns broadcast to both halves of a ZMM (VBROADCASTF64X4: AVX-512 F) and stored at
// its place (16 floats at 16j of the block's 16·slots), zeros for j ≥ k (PACKINPUTS).
TEXT ·packInputsDupAVX512(SB), NOSPLIT, $0-40
	PACKINPUTS(6, VBROADCASTF64X4, Z0, Z1, dupinput, dupblock, dupzero, dupdone)

// func packInputBlocksAVX512(dst, x *float32, cols, k, slots int)
//
// packInputBlocksGeneric for cols > 0 (a multiple of 8): for each input j < slots, each
// block of eight columns copied to its place (8 floats at 8j of the block's 8·slots),
// zeros for j ≥ k (PACKINPUTS).
TEXT ·packInputBlocksAVX512(SB), NOSPLIT, $0-40
	PACKINPUTS(5, VMOVUPS, Y0, Y1, onceinput, onceblock, oncezero, oncedone)
