//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The prefill block of gemm_amd64.go for 256-bit vectors: two weight rows against six
// input vectors, twelve dot products in twelve YMM accumulators, each with Dot's exact
// lane arithmetic (VMULPS then VADDPS, input first, never fused). Only AVX instructions
// are used.
// With the two multiplier and two adder pipes of current x86 cores, twelve independent
// chains keep all four busy: per block of eight columns two row loads, six input loads,
// twelve multiplies and twelve additions.

// STEP2x6 is one block of eight columns at byte offset O: rows at SI and R8 into Y12 and
// Y13, inputs at DI, DI+R10, DI+2·R10, R11 = DI+3·R10, DI+4·R10, R11+2·R10, one at a time
// in Y14; (row k, input j) accumulates in Y(6k+j); Y15 holds the products.
#define STEP2x6(O) \
	VMOVUPS O(SI), Y12; \
	VMOVUPS O(R8), Y13; \
	VMOVUPS O(DI), Y14; \
	MULADD(Y14, Y12, Y15, Y0); \
	MULADD(Y14, Y13, Y15, Y6); \
	VMOVUPS O(DI)(R10*1), Y14; \
	MULADD(Y14, Y12, Y15, Y1); \
	MULADD(Y14, Y13, Y15, Y7); \
	VMOVUPS O(DI)(R10*2), Y14; \
	MULADD(Y14, Y12, Y15, Y2); \
	MULADD(Y14, Y13, Y15, Y8); \
	VMOVUPS O(R11), Y14; \
	MULADD(Y14, Y12, Y15, Y3); \
	MULADD(Y14, Y13, Y15, Y9); \
	VMOVUPS O(DI)(R10*4), Y14; \
	MULADD(Y14, Y12, Y15, Y4); \
	MULADD(Y14, Y13, Y15, Y10); \
	VMOVUPS O(R11)(R10*2), Y14; \
	MULADD(Y14, Y12, Y15, Y5); \
	MULADD(Y14, Y13, Y15, Y11)

// STORE2 reduces the accumulators of rows 0 and 1 of one input (A and B, whose low halves
// are XA and XB) and stores them side by side at R9.
#define STORE2(A, XA, B, XB) \
	REDUCE8(A, XA, X12); \
	REDUCE8(B, XB, X13); \
	VMOVSS XA, (R9); \
	VMOVSS XB, 4(R9)

// func gemm2x6AVX(out *float32, outStride int, w *float32, x *float32, n, tiles int)
//
// For each of tiles pairs of rows (n floats each, one after the other from w): the two
// rows against the six input vectors x + j·n floats, j = 0..5, over n columns (a positive
// multiple of 8), then REDUCE8 on each accumulator, and row 2t+k of input j goes to
// out[j·outStride + 2t + k]. The inputs stay in the caches while the pairs of rows stream
// past them. R12 counts the pairs left, R15 is the row stride in bytes, AX the pair's
// first output, R13 the output stride in bytes.
TEXT ·gemm2x6AVX(SB), NOSPLIT, $0-48
	MOVQ tiles+40(FP), R12
	MOVQ out+0(FP), AX
	MOVQ w+16(FP), SI
	MOVQ n+32(FP), R15
	SHLQ $2, R15
	MOVQ R15, R10
	MOVQ outStride+8(FP), R13
	SHLQ $2, R13

tile:
	LEAQ   (SI)(R15*1), R8
	LEAQ   (SI)(R15*2), BX // the next pair's rows: (BX), (BX)(R15*1)
	MOVQ   x+24(FP), DI
	LEAQ   (DI)(R10*2), R11
	ADDQ   R10, R11
	MOVQ   R15, CX
	SHRQ   $5, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

	// An odd block first, then two blocks per iteration.
	TESTQ $1, CX
	JZ    pairs
	STEP2x6(0)
	ADDQ  $32, SI
	ADDQ  $32, R8
	ADDQ  $32, BX
	ADDQ  $32, DI
	ADDQ  $32, R11
	SUBQ  $1, CX
	JZ    done

pairs:
	// The next pair of rows is read into L2 while this one is multiplied (as in
	// gemm4x8AVX512).
	PREFETCHT1 (BX)
	PREFETCHT1 (BX)(R15*1)
	STEP2x6(0)
	STEP2x6(32)
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, BX
	ADDQ $64, DI
	ADDQ $64, R11
	SUBQ $2, CX
	JNZ  pairs

done:
	// SI has walked a row: it now points at the second row of the pair, R8 at the next
	// pair's first row. Row 2t+k of input j goes to out[j*outStride+2t+k]; R9 walks the
	// inputs.
	MOVQ R8, SI
	MOVQ AX, R9
	STORE2(Y0, X0, Y6, X6)
	ADDQ R13, R9
	STORE2(Y1, X1, Y7, X7)
	ADDQ R13, R9
	STORE2(Y2, X2, Y8, X8)
	ADDQ R13, R9
	STORE2(Y3, X3, Y9, X9)
	ADDQ R13, R9
	STORE2(Y4, X4, Y10, X10)
	ADDQ R13, R9
	STORE2(Y5, X5, Y11, X11)
	ADDQ   $8, AX
	DECQ   R12
	JNZ    tile
	VZEROUPPER
	RET
