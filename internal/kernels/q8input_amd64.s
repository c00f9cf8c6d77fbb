//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// Q8Q8BLOCK adds the block of the row at R (byte offset OFF) to ACC with AVX2: the 32
// weights widened to int16 and multiplied by the input's (DI + 2·OFF/34·32) in pairs
// (VPMADDWD), the pairs added in fours (VPHADDD, which leaves the eight lanes in the order
// 0 1 4 5 2 3 6 7, put right at the end), converted, multiplied by s = dw·dx (the weight
// scale times the input's at R12) and added. Y8-Y10 are scratch.
#define Q8Q8BLOCK(R, OFF, XOFF, DOFF, ACC) \
	VPMOVSXBW    OFF+2(R), Y8; \
	VPMOVSXBW    OFF+18(R), Y9; \
	VPMADDWD     XOFF(DI), Y8, Y8; \
	VPMADDWD     XOFF+32(DI), Y9, Y9; \
	VPHADDD      Y9, Y8, Y8; \
	VCVTDQ2PS    Y8, Y8; \
	VPBROADCASTW OFF(R), X10; \
	VCVTPH2PS    X10, Y10; \
	VMULPS       DOFF(R12), Y10, Y10; \
	VMULPS       Y10, Y8, Y8; \
	VADDPS       Y8, ACC, ACC

// Q8FOLD puts a row's even (E) and odd (O) block lanes in lane order (VPERMQ 0xd8:
// quadwords 0 2 1 3), folds them as E+O and sums them by REDUCE8 into the low lane of XE.
#define Q8FOLD(E, O, XE) \
	VPERMQ $0xd8, E, E; \
	VPERMQ $0xd8, O, O; \
	VADDPS O, E, E; \
	REDUCE8(E, XE, X8)

// Q8AHEAD is how far ahead in the weights dotQ8_0Q8AVX2 prefetches (into L2, PREFETCHT1): a
// product's rows are consecutive, so past the end of a row it prefetches the next one's.
#define Q8AHEAD 2048

// func dotQ8_0Q8AVX2(w *byte, xq16 *int16, dl *float32, nb int) float32
//
// Even blocks go to Y0, odd ones to Y1 (DotQ8_0Q8's lanes 0-7 and 8-15), folded at the end
// by Q8FOLD.
TEXT ·dotQ8_0Q8AVX2(SB), NOSPLIT, $0-36
	MOVQ   w+0(FP), SI
	MOVQ   xq16+8(FP), DI
	MOVQ   dl+16(FP), R12
	MOVQ   nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   CX, AX
	SHRQ   $1, AX
	JZ     last

pairs:
	PREFETCHT1 Q8AHEAD(SI)
	Q8Q8BLOCK(SI, 0, 0, 0, Y0)
	Q8Q8BLOCK(SI, 34, 64, 32, Y1)
	ADDQ $68, SI
	ADDQ $128, DI
	ADDQ $64, R12
	DECQ AX
	JNZ  pairs

last:
	TESTQ $1, CX
	JZ    fold
	Q8Q8BLOCK(SI, 0, 0, 0, Y0)

fold:
	Q8FOLD(Y0, Y1, X0)
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// func dotQ8_0Q8x4AVX2(out *float32, w *byte, xq16 *int16, dl *float32, nb, stride, outStride int)
//
// dotQ8_0Q8AVX2 for the four rows at w + k·stride bytes, k = 0..3 (their even blocks in
// Y0-Y3, odd ones in Y4-Y7), each prefetching Q8AHEAD bytes ahead into L2; row k's result
// goes to out + k·outStride floats.
TEXT ·dotQ8_0Q8x4AVX2(SB), NOSPLIT, $0-56
	MOVQ   w+8(FP), SI
	MOVQ   xq16+16(FP), DI
	MOVQ   dl+24(FP), R12
	MOVQ   nb+32(FP), CX
	MOVQ   stride+40(FP), AX
	LEAQ   (SI)(AX*1), R8
	LEAQ   (R8)(AX*1), R9
	LEAQ   (R9)(AX*1), R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   CX, BX
	SHRQ   $1, BX
	JZ     last4

pairs4:
	PREFETCHT1 Q8AHEAD(SI)
	PREFETCHT1 Q8AHEAD(R8)
	PREFETCHT1 Q8AHEAD(R9)
	PREFETCHT1 Q8AHEAD(R10)
	Q8Q8BLOCK(SI, 0, 0, 0, Y0)
	Q8Q8BLOCK(R8, 0, 0, 0, Y1)
	Q8Q8BLOCK(R9, 0, 0, 0, Y2)
	Q8Q8BLOCK(R10, 0, 0, 0, Y3)
	Q8Q8BLOCK(SI, 34, 64, 32, Y4)
	Q8Q8BLOCK(R8, 34, 64, 32, Y5)
	Q8Q8BLOCK(R9, 34, 64, 32, Y6)
	Q8Q8BLOCK(R10, 34, 64, 32, Y7)
	ADDQ $68, SI
	ADDQ $68, R8
	ADDQ $68, R9
	ADDQ $68, R10
	ADDQ $128, DI
	ADDQ $64, R12
	DECQ BX
	JNZ  pairs4

last4:
	TESTQ $1, CX
	JZ    fold4
	Q8Q8BLOCK(SI, 0, 0, 0, Y0)
	Q8Q8BLOCK(R8, 0, 0, 0, Y1)
	Q8Q8BLOCK(R9, 0, 0, 0, Y2)
	Q8Q8BLOCK(R10, 0, 0, 0, Y3)

fold4:
	MOVQ out+0(FP), DX
	MOVQ outStride+48(FP), AX
	SHLQ $2, AX
	Q8FOLD(Y0, Y4, X0)
	VMOVSS X0, (DX)
	ADDQ AX, DX
	Q8FOLD(Y1, Y5, X1)
	VMOVSS X1, (DX)
	ADDQ AX, DX
	Q8FOLD(Y2, Y6, X2)
	VMOVSS X2, (DX)
	ADDQ AX, DX
	Q8FOLD(Y3, Y7, X3)
	VMOVSS X3, (DX)
	VZEROUPPER
	RET
