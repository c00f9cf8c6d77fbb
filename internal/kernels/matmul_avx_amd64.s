//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// DOT4X1_AHEAD is how far ahead of the current position dot4x1AVX prefetches each row.
#define DOT4X1_AHEAD 1024

// func dot4x1AVX(out, w, x *float32, n int)
//
// Weight rows at SI, R8, R9, R10; input at DI; lanes of row k in Yk. AX is the byte offset
// of the current block of eight, BX the byte length of the whole blocks.
TEXT ·dot4x1AVX(SB), NOSPLIT, $0-32
	MOVQ   out+0(FP), DX
	MOVQ   w+8(FP), SI
	MOVQ   x+16(FP), DI
	MOVQ   n+24(FP), CX
	LEAQ   (SI)(CX*4), R8
	LEAQ   (R8)(CX*4), R9
	LEAQ   (R9)(CX*4), R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-8, BX
	SHLQ   $2, BX
	TESTQ  BX, BX
	JZ     tail
	MOVQ   BX, R13
	ANDQ   $-64, R13
	JZ     loop

	// Sixteen elements (one cache line) of each row per iteration, each row's line
	// DOT4X1_AHEAD bytes ahead prefetched: the four rows are four streams, and decode is
	// bound by how fast they arrive. The two blocks of eight go into the same accumulator
	// one after the other, so the lane order is unchanged.
loop2:
	PREFETCHT1 DOT4X1_AHEAD(SI)(AX*1)
	PREFETCHT1 DOT4X1_AHEAD(R8)(AX*1)
	PREFETCHT1 DOT4X1_AHEAD(R9)(AX*1)
	PREFETCHT1 DOT4X1_AHEAD(R10)(AX*1)
	VMOVUPS    (DI)(AX*1), Y8
	MULADD(Y8, (SI)(AX*1), Y9, Y0)
	MULADD(Y8, (R8)(AX*1), Y10, Y1)
	MULADD(Y8, (R9)(AX*1), Y11, Y2)
	MULADD(Y8, (R10)(AX*1), Y12, Y3)
	VMOVUPS    32(DI)(AX*1), Y8
	MULADD(Y8, 32(SI)(AX*1), Y9, Y0)
	MULADD(Y8, 32(R8)(AX*1), Y10, Y1)
	MULADD(Y8, 32(R9)(AX*1), Y11, Y2)
	MULADD(Y8, 32(R10)(AX*1), Y12, Y3)
	ADDQ       $64, AX
	CMPQ       AX, R13
	JNE        loop2
	CMPQ       AX, BX
	JEQ        tail

loop:
	VMOVUPS (DI)(AX*1), Y8
	MULADD(Y8, (SI)(AX*1), Y9, Y0)
	MULADD(Y8, (R8)(AX*1), Y10, Y1)
	MULADD(Y8, (R9)(AX*1), Y11, Y2)
	MULADD(Y8, (R10)(AX*1), Y12, Y3)
	ADDQ    $32, AX
	CMPQ    AX, BX
	JNE     loop

tail:
	// As in dotAVXAsm: masked loads give +0 in the lanes past the end.
	ANDQ       $7, CX
	JZ         reduce
	TAILMASK(CX, R11, R12, Y13)
	VMASKMOVPS (DI)(AX*1), Y13, Y8
	VMASKMOVPS (SI)(AX*1), Y13, Y4
	VMASKMOVPS (R8)(AX*1), Y13, Y5
	VMASKMOVPS (R9)(AX*1), Y13, Y6
	VMASKMOVPS (R10)(AX*1), Y13, Y7
	MULADD(Y8, Y4, Y9, Y0)
	MULADD(Y8, Y5, Y10, Y1)
	MULADD(Y8, Y6, Y11, Y2)
	MULADD(Y8, Y7, Y12, Y3)

reduce:
	REDUCE8(Y0, X0, X8)
	REDUCE8(Y1, X1, X9)
	REDUCE8(Y2, X2, X10)
	REDUCE8(Y3, X3, X11)
	VMOVSS     X0, (DX)
	VMOVSS     X1, 4(DX)
	VMOVSS     X2, 8(DX)
	VMOVSS     X3, 12(DX)
	VZEROUPPER
	RET

// func dot4x2AVX(out *float32, outStride int, w, x *float32, n int)
//
// Weight rows at SI, R8, R9, R10; inputs at DI and R11; lanes of (row k, input 0) in Yk
// and of (row k, input 1) in Y(k+4). AX is the byte offset of the current block of eight,
// BX the byte length of the whole blocks, R13 the output stride in bytes. The next four
// rows (16n bytes from R12 on) are read into L2 meanwhile, two lines per block, as one
// stream: a batch of two or three float32 inputs goes through this kernel alone, and
// without it every group of rows waited for memory.
TEXT ·dot4x2AVX(SB), NOSPLIT, $0-40
	MOVQ   out+0(FP), DX
	MOVQ   outStride+8(FP), R13
	SHLQ   $2, R13
	MOVQ   w+16(FP), SI
	MOVQ   x+24(FP), DI
	MOVQ   n+32(FP), CX
	LEAQ   (SI)(CX*4), R8
	LEAQ   (R8)(CX*4), R9
	LEAQ   (R9)(CX*4), R10
	LEAQ   (DI)(CX*4), R11
	LEAQ   (SI)(CX*8), R12
	LEAQ   (R12)(CX*8), R12
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-8, BX
	SHLQ   $2, BX
	TESTQ  BX, BX
	JZ     tail

loop:
	PREFETCHT1 (R12)(AX*4)
	PREFETCHT1 64(R12)(AX*4)
	VMOVUPS (DI)(AX*1), Y8
	VMOVUPS (R11)(AX*1), Y9
	VMOVUPS (SI)(AX*1), Y10
	MULADD(Y8, Y10, Y11, Y0)
	MULADD(Y9, Y10, Y12, Y4)
	VMOVUPS (R8)(AX*1), Y10
	MULADD(Y8, Y10, Y11, Y1)
	MULADD(Y9, Y10, Y12, Y5)
	VMOVUPS (R9)(AX*1), Y10
	MULADD(Y8, Y10, Y11, Y2)
	MULADD(Y9, Y10, Y12, Y6)
	VMOVUPS (R10)(AX*1), Y10
	MULADD(Y8, Y10, Y11, Y3)
	MULADD(Y9, Y10, Y12, Y7)
	ADDQ    $32, AX
	CMPQ    AX, BX
	JNE     loop

tail:
	// As in dotAVXAsm: masked loads give +0 in the lanes past the end.
	ANDQ       $7, CX
	JZ         reduce
	TAILMASK(CX, BX, R12, Y13)
	VMASKMOVPS (DI)(AX*1), Y13, Y8
	VMASKMOVPS (R11)(AX*1), Y13, Y9
	VMASKMOVPS (SI)(AX*1), Y13, Y10
	MULADD(Y8, Y10, Y11, Y0)
	MULADD(Y9, Y10, Y12, Y4)
	VMASKMOVPS (R8)(AX*1), Y13, Y10
	MULADD(Y8, Y10, Y11, Y1)
	MULADD(Y9, Y10, Y12, Y5)
	VMASKMOVPS (R9)(AX*1), Y13, Y10
	MULADD(Y8, Y10, Y11, Y2)
	MULADD(Y9, Y10, Y12, Y6)
	VMASKMOVPS (R10)(AX*1), Y13, Y10
	MULADD(Y8, Y10, Y11, Y3)
	MULADD(Y9, Y10, Y12, Y7)

reduce:
	REDUCE8(Y0, X0, X8)
	REDUCE8(Y1, X1, X9)
	REDUCE8(Y2, X2, X10)
	REDUCE8(Y3, X3, X11)
	REDUCE8(Y4, X4, X12)
	REDUCE8(Y5, X5, X13)
	REDUCE8(Y6, X6, X8)
	REDUCE8(Y7, X7, X9)
	VMOVSS     X0, (DX)
	VMOVSS     X1, 4(DX)
	VMOVSS     X2, 8(DX)
	VMOVSS     X3, 12(DX)
	VMOVSS     X4, (DX)(R13*1)
	VMOVSS     X5, 4(DX)(R13*1)
	VMOVSS     X6, 8(DX)(R13*1)
	VMOVSS     X7, 12(DX)(R13*1)
	VZEROUPPER
	RET

// DOTROWS_AHEAD is how far ahead in the weights dotRowsAVX prefetches.
#define DOTROWS_AHEAD 2048

// func dotRowsAVX(out, w, x *float32, rows, n, stride int)
//
// The batch-1 product: out[r] = Dot(x, w_r) for rows weight rows of n floats, stride floats
// apart (n for a matrix; attention's keys of one head are a cache row apart),
// n a positive multiple of 8, one row after the other, so that the weights are read as a
// single sequential stream (what the hardware prefetchers follow best; four rows at a time
// make four short streams that restart every row). Each row is dotAVXAsm's arithmetic: one
// YMM accumulator (Y0, re-zeroed per row, which also frees the next row from waiting on the
// last one), x first, VMULPS then VADDPS, REDUCE8.
TEXT ·dotRowsAVX(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	MOVQ rows+24(FP), R8
	MOVQ n+32(FP), CX
	SHLQ $2, CX
	MOVQ stride+40(FP), R15
	SHLQ $2, R15
	MOVQ CX, BX
	ANDQ $-64, BX

row:
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	TESTQ  BX, BX
	JZ     rest

pair:
	PREFETCHT1 DOTROWS_AHEAD(SI)(AX*1)
	VMOVUPS    (DI)(AX*1), Y1
	VMULPS     (SI)(AX*1), Y1, Y1
	VADDPS     Y1, Y0, Y0
	VMOVUPS    32(DI)(AX*1), Y2
	VMULPS     32(SI)(AX*1), Y2, Y2
	VADDPS     Y2, Y0, Y0
	ADDQ       $64, AX
	CMPQ       AX, BX
	JNE        pair

rest:
	CMPQ    AX, CX
	JEQ     rowdone
	VMOVUPS (DI)(AX*1), Y1
	VMULPS  (SI)(AX*1), Y1, Y1
	VADDPS  Y1, Y0, Y0

rowdone:
	REDUCE8(Y0, X0, X1)
	VMOVSS X0, (DX)
	ADDQ   $4, DX
	ADDQ   R15, SI
	DECQ   R8
	JNZ    row
	VZEROUPPER
	RET

// ROWS4GROUP is one group of eight columns of dotRowsX4AVX and dotRowsQ4AVX: the rows at
// SI, R8, R9, R10 times x at DI (byte offset AX) added to their lanes Y0-Y3, x first,
// VMULPS then VADDPS, and the same offset of the rows at R11, R12, R13, BX prefetched into
// L2.
#define ROWS4GROUP \
	PREFETCHT1 (R11)(AX*1); \
	PREFETCHT1 (R12)(AX*1); \
	PREFETCHT1 (R13)(AX*1); \
	PREFETCHT1 (BX)(AX*1); \
	VMOVUPS    (DI)(AX*1), Y8; \
	VMULPS     (SI)(AX*1), Y8, Y4; \
	VMULPS     (R8)(AX*1), Y8, Y5; \
	VMULPS     (R9)(AX*1), Y8, Y6; \
	VMULPS     (R10)(AX*1), Y8, Y7; \
	VADDPS     Y4, Y0, Y0; \
	VADDPS     Y5, Y1, Y1; \
	VADDPS     Y6, Y2, Y2; \
	VADDPS     Y7, Y3, Y3

// func dotRowsQ4AVX(out, w, x *float32, q, n, stride int)
//
// dotRowsX4AVX's arithmetic over four quarters of 4q rows side by side (QSTART in
// avx_amd64.h): rows i, i+q, i+2q and i+3q (stride floats apart) for i = 0..q-1, each
// quarter one sequential stream with its row two on prefetched into L2, the results at
// out[i], out[i+q], out[i+2q] and out[i+3q]. q > 0, n a positive multiple of 8.
TEXT ·dotRowsQ4AVX(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ x+16(FP), DI
	MOVQ q+24(FP), R15
	MOVQ stride+40(FP), R14
	SHLQ $2, R14 // bytes from one row to the next
	QSTART(w+8(FP), q+24(FP), R14)

q4row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   n+32(FP), CX
	SHLQ   $2, CX // bytes per row

q4group:
	ROWS4GROUP
	ADDQ $32, AX
	CMPQ AX, CX
	JNE  q4group

	REDUCE4(Y0, X0, Y1, X1, Y2, X2, Y3, X3)
	MOVQ q+24(FP), AX
	MOVQ DX, CX
	QSTORE4(X0, X1, X2, X3)
	QNEXT(R14)
	DECQ R15
	JNZ  q4row
	VZEROUPPER
	RET

// func dotRowsX4AVX(out, w, x *float32, rows, n, stride int)
//
// The batch-1 product over rows stride floats apart, four adjacent rows at a time (rows a positive
// multiple of 4, n a positive multiple of 8): each row is dotAVXAsm's arithmetic in its own
// accumulator (Y0..Y3): x first, VMULPS then VADDPS, REDUCE8. While it reads four rows it
// prefetches the same offset of the next four into L2 (PREFETCHT1, one hint per row and group
// of eight), which keeps enough misses in flight to read at the memory's speed (see
// rowdot_avx2_amd64.s).
TEXT ·dotRowsX4AVX(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	MOVQ rows+24(FP), R14
	MOVQ n+32(FP), CX
	SHLQ $2, CX // bytes per row
	MOVQ stride+40(FP), R15
	SHLQ $2, R15 // bytes from one row to the next

x4rows:
	LEAQ   (SI)(R15*1), R8
	LEAQ   (R8)(R15*1), R9
	LEAQ   (R9)(R15*1), R10
	LEAQ   (SI)(R15*4), R11
	LEAQ   (R8)(R15*4), R12
	LEAQ   (R9)(R15*4), R13
	LEAQ   (R10)(R15*4), BX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

x4group:
	ROWS4GROUP
	ADDQ       $32, AX
	CMPQ       AX, CX
	JNE        x4group

	REDUCE4(Y0, X0, Y1, X1, Y2, X2, Y3, X3)
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	ADDQ   $16, DX
	LEAQ   (R10)(R15*1), SI
	SUBQ   $4, R14
	JNZ    x4rows
	VZEROUPPER
	RET
