//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// Q8Q8BLOCK adds the block at SI (byte offset OFF) to ACC with AVX2: the 32 weights widened
// to int16 and multiplied by the input's (DI + 2·OFF/34·32) in pairs (VPMADDWD), the pairs
// added in fours (VPHADDD, which leaves the eight lanes in the order 0 1 4 5 2 3 6 7, put
// right at the end), converted, multiplied by s = dw·dx and added.
#define Q8Q8BLOCK(OFF, XOFF, DOFF, ACC) \
	VPMOVSXBW    OFF+2(SI), Y2; \
	VPMOVSXBW    OFF+18(SI), Y3; \
	VPMADDWD     XOFF(DI), Y2, Y2; \
	VPMADDWD     XOFF+32(DI), Y3, Y3; \
	VPHADDD      Y3, Y2, Y2; \
	VCVTDQ2PS    Y2, Y2; \
	VPBROADCASTW OFF(SI), X4; \
	VCVTPH2PS    X4, Y4; \
	VMULPS       DOFF(R12), Y4, Y4; \
	VMULPS       Y4, Y2, Y2; \
	VADDPS       Y2, ACC, ACC

// Q8AHEAD is how far ahead in the weights dotQ8_0Q8AVX2 prefetches (into L2, PREFETCHT1): a
// product's rows are consecutive, so past the end of a row it prefetches the next one's.
#define Q8AHEAD 2048

// func dotQ8_0Q8AVX2(w *byte, xq16 *int16, dl *float32, nb int) float32
//
// Even blocks go to Y0, odd ones to Y1 (DotQ8_0Q8's lanes 0-7 and 8-15); at the end both
// are put in lane order (VPERMQ 0xd8: quadwords 0 2 1 3), folded as Y0+Y1 and summed by
// REDUCE8.
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
	Q8Q8BLOCK(0, 0, 0, Y0)
	Q8Q8BLOCK(34, 64, 32, Y1)
	ADDQ $68, SI
	ADDQ $128, DI
	ADDQ $64, R12
	DECQ AX
	JNZ  pairs

last:
	TESTQ $1, CX
	JZ    fold
	Q8Q8BLOCK(0, 0, 0, Y0)

fold:
	VPERMQ $0xd8, Y0, Y0
	VPERMQ $0xd8, Y1, Y1
	VADDPS Y1, Y0, Y0
	REDUCE8(Y0, X0, X8)
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET
