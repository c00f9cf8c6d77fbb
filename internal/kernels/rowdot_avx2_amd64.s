//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// Row dots on stored weights (rowdot_amd64.go): every group of eight values is decoded
// exactly into a YMM register (VCVTPH2PS for halves; VPMOVZXWD and a 16-bit left shift for
// bfloat16), then MULADD adds float32(x·v) to the lanes, VMULPS then VADDPS, and REDUCE8 combines the lanes in
// Dot's order. Only AVX2 and F16C are used; nothing is fused. (Q8_0 weight rows take a
// quantized input instead: DotQ8_0Q8, q8input_avx2_amd64.s.)
//
// The four-row kernels also prefetch the same offset of the next four rows, which the next
// call will read: batch-1 matrix–vector products walk the rows in order, and without it one
// core keeps too few cache misses in flight to stream from memory at full speed. They
// prefetch into L2 (PREFETCHT1), one hint per group of eight values: a PREFETCHT0 waits for
// one of L1's few miss buffers and is dropped when none is free (measured on Zen 4 with 2 threads over a 1 GiB
// matrix: four quarters read side by side with T0 reached 0.57 of the StreamRead bandwidth,
// four adjacent rows with T0 0.75, with T1 1.0). A prefetch is only a hint: it never faults
// and changes no result, so prefetching past the end of the matrix is harmless.

// The 16-bit row kernels (dotF16AVX2Asm, dotBF16AVX2Asm, dotF16x4AVX2, dotBF16x4AVX2 and
// the sequential-stream ones below) differ only in how eight stored values become eight
// floats: F16LOAD or BF16LOAD (avx_amd64.h). Each kernel's loop is one macro taking the
// LOAD.

// The one-row kernels: x in SI, the row in DI, n8 in CX, the tail groups at R8 and R9,
// the lanes in Y0; AX is the index of the current group of eight values.

// ROW1GROUP adds the eight values at WM times the eight floats at XM to the lanes: x first,
// VMULPS then VADDPS.
#define ROW1GROUP(WM, XM, LOAD) \
	LOAD(WM, Y1); \
	VMOVUPS XM, Y2; \
	MULADD(Y2, Y1, Y3, Y0)

// ROW1END adds the zero-padded last group (all +0 products when n is a multiple of 8),
// and combines the lanes into X0.
#define ROW1END(LOAD) \
	ROW1GROUP((R9), (R8), LOAD); \
	REDUCE8(Y0, X0, X1)

// The four-row kernels: rows at SI, R8, R9, R10 (2n bytes apart), the next four rows
// (prefetched) at R11, R12, R13, BX; x in DI, out in DX, n in CX; lanes of row k in Yk;
// AX is the index of the current group of eight values.

// ROW4START derives the rows' addresses from SI and the stride in bytes in R14, and clears
// the lanes and the counter.
#define ROW4START \
	LEAQ   (SI)(R14*1), R8; \
	LEAQ   (R8)(R14*1), R9; \
	LEAQ   (R9)(R14*1), R10; \
	LEAQ   (SI)(R14*4), R11; \
	LEAQ   (R8)(R14*4), R12; \
	LEAQ   (R9)(R14*4), R13; \
	LEAQ   (R10)(R14*4), BX; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	XORQ   AX, AX

// ROW4GROUP prefetches the next four rows' values at AX into L2 (PREFETCHT1) and adds eight
// values of each row times x to its lanes.
#define ROW4GROUP(LOAD) \
	PREFETCHT1 (R11)(AX*2); \
	PREFETCHT1 (R12)(AX*2); \
	PREFETCHT1 (R13)(AX*2); \
	PREFETCHT1 (BX)(AX*2); \
	VMOVUPS    (DI)(AX*4), Y8; \
	LOAD((SI)(AX*2), Y4); \
	LOAD((R8)(AX*2), Y5); \
	LOAD((R9)(AX*2), Y6); \
	LOAD((R10)(AX*2), Y7); \
	MULADD(Y8, Y4, Y9, Y0); \
	MULADD(Y8, Y5, Y10, Y1); \
	MULADD(Y8, Y6, Y11, Y2); \
	MULADD(Y8, Y7, Y12, Y3)

// The four-row, two-input kernels (dotF16x4x2AVX2, dotBF16x4x2AVX2) are the four-row ones
// for two input vectors side by side (x at DI, the second at R14 = DI + 4n): the rows'
// eight values are decoded once for both, the lanes of (row k, input j) in Y(4j+k).

// ROW4X2GROUP is ROW4GROUP for the two inputs.
#define ROW4X2GROUP(LOAD) \
	PREFETCHT1 (R11)(AX*2); \
	PREFETCHT1 (R12)(AX*2); \
	PREFETCHT1 (R13)(AX*2); \
	PREFETCHT1 (BX)(AX*2); \
	LOAD((SI)(AX*2), Y8); \
	LOAD((R8)(AX*2), Y9); \
	LOAD((R9)(AX*2), Y10); \
	LOAD((R10)(AX*2), Y11); \
	VMOVUPS    (DI)(AX*4), Y12; \
	VMOVUPS    (R14)(AX*4), Y13; \
	MULADD(Y12, Y8, Y14, Y0); \
	MULADD(Y12, Y9, Y15, Y1); \
	MULADD(Y12, Y10, Y14, Y2); \
	MULADD(Y12, Y11, Y15, Y3); \
	MULADD(Y13, Y8, Y14, Y4); \
	MULADD(Y13, Y9, Y15, Y5); \
	MULADD(Y13, Y10, Y14, Y6); \
	MULADD(Y13, Y11, Y15, Y7)

// ROW4X2 is the whole of a four-row, two-input kernel: the arguments, the loop over the
// groups of eight values (label L), then the first input's four results at DX (ROW4END)
// and the second's outStride floats on.
#define ROW4X2(LOAD, L) \
	MOVQ   out+0(FP), DX; \
	MOVQ   w+16(FP), SI; \
	MOVQ   x+24(FP), DI; \
	MOVQ   n+32(FP), CX; \
	MOVQ   stride+40(FP), R14; \
	ROW4START; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	LEAQ   (DI)(CX*4), R14; \
L: \
	ROW4X2GROUP(LOAD); \
	ADDQ   $8, AX; \
	CMPQ   AX, CX; \
	JNE    L; \
	ROW4END; \
	MOVQ   outStride+8(FP), R14; \
	LEAQ   (DX)(R14*4), DX; \
	VMOVAPS Y4, Y0; \
	VMOVAPS Y5, Y1; \
	VMOVAPS Y6, Y2; \
	VMOVAPS Y7, Y3; \
	ROW4END; \
	VZEROUPPER

// The quarter kernels (dotF16Q4AVX2, dotBF16Q4AVX2, and dotF16Q4x2AVX2, dotBF16Q4x2AVX2
// for two inputs) are the four-row ones walking four quarters of a piece of rows side by
// side: rows i, i+q, i+2q and i+3q for i = 0..c-1 (c ≤ q), each quarter one long
// sequential stream, with the row two on in each quarter prefetched into L2 at the same
// offset (ROW4GROUP, ROW4X2GROUP), and the results at out[i], out[i+q], out[i+2q] and
// out[i+3q]. Each row's lanes are the four-row kernels' own: the same bits. Four adjacent
// rows of 1,536 bytes (768 halves) are four streams that end every 6 KiB; on AMD Zen 3 one
// core read such a matrix at 12.3–12.4 GB/s that way and at 22.3–22.7 GB/s in quarters
// (2,048 halves: 18.2–19.1 against 20.1–20.8; BenchmarkMatVecWalk).

// ROW4QUARTERS is the whole of a one-input quarter kernel, for the arguments (out *float32,
// w *byte, x *float32, c, q, n, stride int); LROW and LGROUP are its labels.
#define ROW4QUARTERS(LOAD, LROW, LGROUP) \
	MOVQ   out+0(FP), DX; \
	MOVQ   x+16(FP), DI; \
	MOVQ   c+24(FP), R15; \
	QSTART(w+8(FP), q+32(FP), stride+48(FP)); \
LROW: \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	XORQ   AX, AX; \
	MOVQ   n+40(FP), CX; \
LGROUP: \
	ROW4GROUP(LOAD); \
	ADDQ   $8, AX; \
	CMPQ   AX, CX; \
	JNE    LGROUP; \
	REDUCE4(Y0, X0, Y1, X1, Y2, X2, Y3, X3); \
	MOVQ   q+32(FP), AX; \
	MOVQ   DX, CX; \
	QSTORE4(X0, X1, X2, X3); \
	QNEXT(stride+48(FP)); \
	DECQ   R15; \
	JNZ    LROW; \
	VZEROUPPER

// ROW4QUARTERSX2 is the whole of a two-input quarter kernel, for the arguments (out
// *float32, outStride int, w *byte, x *float32, c, q, n, stride int): the second input at
// R14 = x + 4n, its results outStride floats after the first's.
#define ROW4QUARTERSX2(LOAD, LROW, LGROUP) \
	MOVQ   out+0(FP), DX; \
	MOVQ   x+24(FP), DI; \
	MOVQ   n+48(FP), CX; \
	LEAQ   (DI)(CX*4), R14; \
	MOVQ   c+32(FP), R15; \
	QSTART(w+16(FP), q+40(FP), stride+56(FP)); \
LROW: \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	XORQ   AX, AX; \
	MOVQ   n+48(FP), CX; \
LGROUP: \
	ROW4X2GROUP(LOAD); \
	ADDQ   $8, AX; \
	CMPQ   AX, CX; \
	JNE    LGROUP; \
	REDUCE4(Y0, X0, Y1, X1, Y2, X2, Y3, X3); \
	MOVQ   q+40(FP), AX; \
	MOVQ   DX, CX; \
	QSTORE4(X0, X1, X2, X3); \
	REDUCE4(Y4, X4, Y5, X5, Y6, X6, Y7, X7); \
	MOVQ   outStride+8(FP), CX; \
	LEAQ   (DX)(CX*4), CX; \
	QSTORE4(X4, X5, X6, X7); \
	QNEXT(stride+56(FP)); \
	DECQ   R15; \
	JNZ    LROW; \
	VZEROUPPER

// func dotF16Q4AVX2(out *float32, w *byte, x *float32, c, q, n, stride int)
//
// 0 < c ≤ q rows of each quarter of q rows, n > 0 a multiple of 8, rows stride bytes apart.
TEXT ·dotF16Q4AVX2(SB), NOSPLIT, $0-56
	ROW4QUARTERS(F16LOAD, row, group)
	RET

// func dotBF16Q4AVX2(out *float32, w *byte, x *float32, c, q, n, stride int)
//
// As dotF16Q4AVX2, for bfloat16 rows.
TEXT ·dotBF16Q4AVX2(SB), NOSPLIT, $0-56
	ROW4QUARTERS(BF16LOAD, row, group)
	RET

// func dotF16Q4x2AVX2(out *float32, outStride int, w *byte, x *float32, c, q, n, stride int)
//
// As dotF16Q4AVX2, against two inputs (x and x + n floats), the second's results
// outStride floats after the first's.
TEXT ·dotF16Q4x2AVX2(SB), NOSPLIT, $0-64
	ROW4QUARTERSX2(F16LOAD, row, group)
	RET

// func dotBF16Q4x2AVX2(out *float32, outStride int, w *byte, x *float32, c, q, n, stride int)
//
// As dotF16Q4x2AVX2, for bfloat16 rows.
TEXT ·dotBF16Q4x2AVX2(SB), NOSPLIT, $0-64
	ROW4QUARTERSX2(BF16LOAD, row, group)
	RET

// func dotF16x4x2AVX2(out *float32, outStride int, w *byte, x *float32, n, stride int)
//
// n > 0 is a multiple of 8; the four rows are stride bytes apart, the two inputs n floats.
TEXT ·dotF16x4x2AVX2(SB), NOSPLIT, $0-48
	ROW4X2(F16LOAD, loop)
	RET

// func dotBF16x4x2AVX2(out *float32, outStride int, w *byte, x *float32, n, stride int)
//
// As dotF16x4x2AVX2, for bfloat16 rows.
TEXT ·dotBF16x4x2AVX2(SB), NOSPLIT, $0-48
	ROW4X2(BF16LOAD, loop)
	RET

// func dotF16AVX2Asm(x *float32, w *byte, n8 int, xt *[8]float32, wt *[8]uint16) float32
//
// Y0 holds the lanes; AX is the index of the current group of eight values.
TEXT ·dotF16AVX2Asm(SB), NOSPLIT, $0-44
	MOVQ   x+0(FP), SI
	MOVQ   w+8(FP), DI
	MOVQ   n8+16(FP), CX
	MOVQ   xt+24(FP), R8
	MOVQ   wt+32(FP), R9
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	TESTQ CX, CX
	JZ    tail

loop:
	ROW1GROUP((DI)(AX*2), (SI)(AX*4), F16LOAD)
	ADDQ $8, AX
	CMPQ AX, CX
	JNE  loop

tail:
	ROW1END(F16LOAD)
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET

// func dotBF16AVX2Asm(x *float32, w *byte, n8 int, xt *[8]float32, wt *[8]uint16) float32
//
// As dotF16AVX2Asm, for bfloat16 values.
TEXT ·dotBF16AVX2Asm(SB), NOSPLIT, $0-44
	MOVQ   x+0(FP), SI
	MOVQ   w+8(FP), DI
	MOVQ   n8+16(FP), CX
	MOVQ   xt+24(FP), R8
	MOVQ   wt+32(FP), R9
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	TESTQ CX, CX
	JZ    tail

loop:
	ROW1GROUP((DI)(AX*2), (SI)(AX*4), BF16LOAD)
	ADDQ $8, AX
	CMPQ AX, CX
	JNE  loop

tail:
	ROW1END(BF16LOAD)
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET

// func dotF16x4AVX2(out *float32, w *byte, x *float32, n, stride int)
//
// n > 0 is a multiple of 8; the four rows are stride bytes apart.
TEXT ·dotF16x4AVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ stride+32(FP), R14
	ROW4START

loop:
	ROW4GROUP(F16LOAD)
	ADDQ $8, AX
	CMPQ AX, CX
	JNE  loop
	ROW4END
	VZEROUPPER
	RET

// func dotBF16x4AVX2(out *float32, w *byte, x *float32, n, stride int)
//
// As dotF16x4AVX2, for bfloat16 rows.
TEXT ·dotBF16x4AVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ stride+32(FP), R14
	ROW4START

loop:
	ROW4GROUP(BF16LOAD)
	ADDQ $8, AX
	CMPQ AX, CX
	JNE  loop
	ROW4END
	VZEROUPPER
	RET

// func dotF16x4NextAVX2(out *float32, w *byte, x *float32, n, stride int, next *byte)
//
// dotF16x4AVX2 (the same arithmetic) that prefetches the four rows at next (stride bytes
// apart) instead of the four after its own: attention's keys of one head in four slots of
// a cache block, whose next block lies anywhere in the pool (next points at the same head
// in the same four slots there). The hints go out one per row and group of eight, spread
// over the work, where a burst of them would wait for L1's few miss buffers.
TEXT ·dotF16x4NextAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ stride+32(FP), R14
	ROW4START
	MOVQ next+40(FP), R11
	LEAQ (R11)(R14*1), R12
	LEAQ (R12)(R14*1), R13
	LEAQ (R13)(R14*1), BX

loop:
	ROW4GROUP(F16LOAD)
	ADDQ $8, AX
	CMPQ AX, CX
	JNE  loop
	ROW4END
	VZEROUPPER
	RET
