//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// A q8_0 cache's heads read in place (headsq8_amd64.go): a block's fp16 scale looked up in
// half.F16Table (R15) and broadcast by the load, its 32 int8 values widened eight at a
// time by VPMOVSXBD and VCVTDQ2PS (exact) and multiplied by the scale (VMULPS: float32(q)·d,
// DecodeQ8_0Strided's values), then the f32 kernels' arithmetic. AVX2 only.

// Q8SCALE broadcasts the scale of the block at M into S (AX scratch).
#define Q8SCALE(M, S) \
	MOVWLZX      M, AX; \
	VBROADCASTSS (R15)(AX*4), S

// Q8WIDEN sets V to the eight values at M, decoded with the scale in S.
#define Q8WIDEN(M, S, V) \
	VPMOVSXBD M, V; \
	VCVTDQ2PS V, V; \
	VMULPS    S, V, V

// Q8DOTROW adds the block at R + R14 (a row of the four) times x's 32 floats in Y8..Y11 to
// the row's lanes in ACC: the four groups of eight in order, x first (MULADD).
#define Q8DOTROW(R, ACC) \
	Q8SCALE((R)(R14*1), Y12); \
	Q8WIDEN(2(R)(R14*1), Y12, Y4); \
	Q8WIDEN(10(R)(R14*1), Y12, Y5); \
	Q8WIDEN(18(R)(R14*1), Y12, Y6); \
	Q8WIDEN(26(R)(R14*1), Y12, Y7); \
	MULADD(Y8, Y4, Y13, ACC); \
	MULADD(Y9, Y5, Y14, ACC); \
	MULADD(Y10, Y6, Y15, ACC); \
	MULADD(Y11, Y7, Y13, ACC)

// func dotQ8_0x4NextAVX2(out *float32, w *byte, x *float32, nb, stride int, next *byte, table *float32)
//
// The rows at SI, R8, R9, R10, the next four at R11, R12, R13, BX (each block's first and
// last byte asked for, so every line it touches); R14 the block's offset in a row, DI
// x's block, CX the blocks left, DX out; the lanes of row k in Yk.
TEXT ·dotQ8_0x4NextAVX2(SB), NOSPLIT, $0-56
	MOVQ   out+0(FP), DX
	MOVQ   w+8(FP), SI
	MOVQ   x+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   stride+32(FP), R14
	MOVQ   next+40(FP), R11
	MOVQ   table+48(FP), R15
	LEAQ   (SI)(R14*1), R8
	LEAQ   (R8)(R14*1), R9
	LEAQ   (R9)(R14*1), R10
	LEAQ   (R11)(R14*1), R12
	LEAQ   (R12)(R14*1), R13
	LEAQ   (R13)(R14*1), BX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   R14, R14

block:
	PREFETCHT1 (R11)(R14*1)
	PREFETCHT1 33(R11)(R14*1)
	PREFETCHT1 (R12)(R14*1)
	PREFETCHT1 33(R12)(R14*1)
	PREFETCHT1 (R13)(R14*1)
	PREFETCHT1 33(R13)(R14*1)
	PREFETCHT1 (BX)(R14*1)
	PREFETCHT1 33(BX)(R14*1)
	VMOVUPS    (DI), Y8
	VMOVUPS    32(DI), Y9
	VMOVUPS    64(DI), Y10
	VMOVUPS    96(DI), Y11
	Q8DOTROW(SI, Y0)
	Q8DOTROW(R8, Y1)
	Q8DOTROW(R9, Y2)
	Q8DOTROW(R10, Y3)
	ADDQ       $34, R14
	ADDQ       $128, DI
	DECQ       CX
	JNZ        block
	ROW4END
	VZEROUPPER
	RET

// Q8AXPY adds float32(a_t·v) to ACC for the eight values v at M of row t's block, Y0 =
// a_t broadcast, Y12 the block's scale, P scratch: Axpy's VMULPS then VADDPS.
#define Q8AXPY(M, P, ACC) \
	Q8WIDEN(M, Y12, P); \
	VMULPS P, Y0, P; \
	VADDPS P, ACC, ACC

// func axpyQ8_0RowsNextAVX2Asm(dst, a *float32, x *byte, nb, stride, rows, next int, table *float32)
//
// dst at DI, a at SI, x's current block of row 0 at DX, the block's row at R9; CX the
// blocks left, R13 the stride, R8 the rows, R14 the distance to next, R12 the row's
// number, R10 the rows left; the block's 32 columns in Y1..Y4.
TEXT ·axpyQ8_0RowsNextAVX2Asm(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ nb+24(FP), CX
	MOVQ stride+32(FP), R13
	MOVQ rows+40(FP), R8
	MOVQ next+48(FP), R14
	MOVQ table+56(FP), R15

axpyblock:
	VMOVUPS (DI), Y1
	VMOVUPS 32(DI), Y2
	VMOVUPS 64(DI), Y3
	VMOVUPS 96(DI), Y4
	MOVQ    DX, R9
	XORQ    R12, R12
	MOVQ    R8, R10

axpyrow:
	PREFETCHT1   (R9)(R14*1)
	PREFETCHT1   33(R9)(R14*1)
	VBROADCASTSS (SI)(R12*4), Y0
	Q8SCALE((R9), Y12)
	Q8AXPY(2(R9), Y5, Y1)
	Q8AXPY(10(R9), Y6, Y2)
	Q8AXPY(18(R9), Y7, Y3)
	Q8AXPY(26(R9), Y8, Y4)
	ADDQ         R13, R9
	INCQ         R12
	DECQ         R10
	JNZ          axpyrow
	VMOVUPS      Y1, (DI)
	VMOVUPS      Y2, 32(DI)
	VMOVUPS      Y3, 64(DI)
	VMOVUPS      Y4, 96(DI)
	ADDQ         $128, DI
	ADDQ         $34, DX
	DECQ         CX
	JNZ          axpyblock
	VZEROUPPER
	RET
