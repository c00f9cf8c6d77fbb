//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"
#include "q8input_amd64.h"

// Q8Q8BLOCK adds the block of the row at R (byte offset OFF) to ACC with AVX2, by ggml's
// sign trick: |w| (VPABSB) times the input's codes in Y11 with w's signs (VPSIGNB), in
// pairs (VPMADDUBSW: |w| ≤ 128 and |x| ≤ 127, so no pair reaches 2^15), the pairs added in
// twos (VPMADDWD by the ones in Y15): lane i holds values 4i..4i+3, DotQ8_0Q8's groups in
// order. The sums converted, multiplied by s = dw·dx (the weight scale times the input's
// at DOFF(R12)) and added. Y8-Y10 are scratch.
#define Q8Q8BLOCK(R, OFF, DOFF, ACC) \
	VPABSB       OFF+2(R), Y8; \
	VPSIGNB      OFF+2(R), Y11, Y9; \
	VPMADDUBSW   Y9, Y8, Y8; \
	VPMADDWD     Y15, Y8, Y8; \
	VCVTDQ2PS    Y8, Y8; \
	VPBROADCASTW OFF(R), X10; \
	VCVTPH2PS    X10, Y10; \
	VMULPS       DOFF(R12), Y10, Y10; \
	VMULPS       Y10, Y8, Y8; \
	VADDPS       Y8, ACC, ACC

// Q8FOLD folds a row's even (E) and odd (O) block lanes as E+O and sums them by REDUCE8
// into the low lane of XE.
#define Q8FOLD(E, O, XE) \
	VADDPS O, E, E; \
	REDUCE8(E, XE, X8)

// Q8ONES puts the int16 ones of VPMADDWD in Y15.
#define Q8ONES \
	VPCMPEQW Y15, Y15, Y15; \
	VPSRLW   $15, Y15, Y15

// Q8AHEAD is how far ahead in the weights dotQ8_0Q8AVX2 prefetches (into L2, PREFETCHT1): a
// product's rows are consecutive, so past the end of a row it prefetches the next one's.
#define Q8AHEAD 2048

// func dotQ8_0Q8AVX2(w *byte, xq *int8, dl *float32, nb int) float32
//
// Even blocks go to Y0, odd ones to Y1 (DotQ8_0Q8's lanes 0-7 and 8-15), folded at the end
// by Q8FOLD.
TEXT ·dotQ8_0Q8AVX2(SB), NOSPLIT, $0-36
	MOVQ   w+0(FP), SI
	MOVQ   xq+8(FP), DI
	MOVQ   dl+16(FP), R12
	MOVQ   nb+24(FP), CX
	Q8ONES
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   CX, AX
	SHRQ   $1, AX
	JZ     last

pairs:
	PREFETCHT1 Q8AHEAD(SI)
	VMOVDQU    (DI), Y11
	Q8Q8BLOCK(SI, 0, 0, Y0)
	VMOVDQU    32(DI), Y11
	Q8Q8BLOCK(SI, 34, 32, Y1)
	ADDQ $68, SI
	ADDQ $64, DI
	ADDQ $64, R12
	DECQ AX
	JNZ  pairs

last:
	TESTQ $1, CX
	JZ    fold
	VMOVDQU (DI), Y11
	Q8Q8BLOCK(SI, 0, 0, Y0)

fold:
	Q8FOLD(Y0, Y1, X0)
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// func dotQ8_0Q8x4AVX2(out *float32, w *byte, xq *int8, dl *float32, nb, stride, outStride int)
//
// dotQ8_0Q8AVX2 for the four rows at w + k·stride bytes, k = 0..3 (their even blocks in
// Y0-Y3, odd ones in Y4-Y7), each prefetching Q8AHEAD bytes ahead into L2; row k's result
// goes to out + k·outStride floats. The input's block is loaded once for the four rows.
TEXT ·dotQ8_0Q8x4AVX2(SB), NOSPLIT, $0-56
	MOVQ   w+8(FP), SI
	MOVQ   xq+16(FP), DI
	MOVQ   dl+24(FP), R12
	MOVQ   nb+32(FP), CX
	MOVQ   stride+40(FP), AX
	LEAQ   (SI)(AX*1), R8
	LEAQ   (R8)(AX*1), R9
	LEAQ   (R9)(AX*1), R10
	Q8ONES
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
	VMOVDQU    (DI), Y11
	Q8Q8BLOCK(SI, 0, 0, Y0)
	Q8Q8BLOCK(R8, 0, 0, Y1)
	Q8Q8BLOCK(R9, 0, 0, Y2)
	Q8Q8BLOCK(R10, 0, 0, Y3)
	VMOVDQU    32(DI), Y11
	Q8Q8BLOCK(SI, 34, 32, Y4)
	Q8Q8BLOCK(R8, 34, 32, Y5)
	Q8Q8BLOCK(R9, 34, 32, Y6)
	Q8Q8BLOCK(R10, 34, 32, Y7)
	ADDQ $68, SI
	ADDQ $68, R8
	ADDQ $68, R9
	ADDQ $68, R10
	ADDQ $64, DI
	ADDQ $64, R12
	DECQ BX
	JNZ  pairs4

last4:
	TESTQ $1, CX
	JZ    fold4
	VMOVDQU (DI), Y11
	Q8Q8BLOCK(SI, 0, 0, Y0)
	Q8Q8BLOCK(R8, 0, 0, Y1)
	Q8Q8BLOCK(R9, 0, 0, Y2)
	Q8Q8BLOCK(R10, 0, 0, Y3)

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

// func quantizeQ8AVX2(x *float32, nb int, qs *int8, d, dLanes *float32, corr *int32, amax *float32)
//
// quantizeQ8AVX512 with AVX2 and F16C, the same arithmetic and the same bytes: the largest
// |x| as the largest bit pattern without the sign (VPMAXUD), d = fp16(amax/127) (VDIVSS,
// then VCVTPS2PH with round-to-nearest-even and back), id = 127/amax, q = (x·id +
// 1.5·2^23) − 1.5·2^23 truncated to int32; the codes packed to bytes by way of int16
// (VPACKSSDW, VPACKSSWB: |q| ≤ 127, nothing saturates; VPERMQ 0xd8 puts each pack's
// quadwords back in order); the correction terms −128·Σ of four q by VPMADDUBSW (ones ×
// q) and VPMADDWD (ones). A block with a NaN or an infinity gets d = NaN and zeros; a
// block whose d is 0 gets zeros. Each block's amax is stored too.
TEXT ·quantizeQ8AVX2(SB), NOSPLIT, $0-56
	Q8QUANTARGS
	MOVL         $0x7fffffff, AX
	MOVD         AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x4b400000, AX // 1.5·2^23
	MOVD         AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x01010101, AX
	MOVD         AX, X13
	VPBROADCASTD X13, Y13
	MOVL         $0x00010001, AX
	MOVD         AX, X12
	VPBROADCASTD X12, Y12
	MOVL         $0x42fe0000, AX // 127.0
	VMOVD        AX, X11

qloop2:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VMOVUPS      64(SI), Y2
	VMOVUPS      96(SI), Y3
	VPAND        Y15, Y0, Y4
	VPAND        Y15, Y1, Y5
	VPAND        Y15, Y2, Y6
	VPAND        Y15, Y3, Y7
	VPMAXUD      Y5, Y4, Y4
	VPMAXUD      Y7, Y6, Y6
	VPMAXUD      Y6, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPMAXUD      X5, X4, X4
	VPSHUFD      $0x4e, X4, X5
	VPMAXUD      X5, X4, X4
	VPSHUFD      $0xb1, X4, X5
	VPMAXUD      X5, X4, X4
	Q8SCALE(X4, X11, X8, X5, qnonfinite2, qzero2) // d in X8, id in X5
	VBROADCASTSS X5, Y5
	VMULPS       Y5, Y0, Y0
	VMULPS       Y5, Y1, Y1
	VMULPS       Y5, Y2, Y2
	VMULPS       Y5, Y3, Y3
	VADDPS       Y14, Y0, Y0
	VADDPS       Y14, Y1, Y1
	VADDPS       Y14, Y2, Y2
	VADDPS       Y14, Y3, Y3
	VSUBPS       Y14, Y0, Y0
	VSUBPS       Y14, Y1, Y1
	VSUBPS       Y14, Y2, Y2
	VSUBPS       Y14, Y3, Y3
	VCVTTPS2DQ   Y0, Y0
	VCVTTPS2DQ   Y1, Y1
	VCVTTPS2DQ   Y2, Y2
	VCVTTPS2DQ   Y3, Y3
	VPACKSSDW    Y1, Y0, Y0
	VPACKSSDW    Y3, Y2, Y2
	VPERMQ       $0xd8, Y0, Y0 // values 0-15 as int16
	VPERMQ       $0xd8, Y2, Y2 // values 16-31
	VPACKSSWB    Y2, Y0, Y0
	VPERMQ       $0xd8, Y0, Y0 // values 0-31 as bytes
	VMOVDQU      Y0, (DI)
	VPMADDUBSW   Y0, Y13, Y0   // sums of two q (ones × q)
	VPMADDWD     Y12, Y0, Y0   // sums of four
	VPSLLD       $7, Y0, Y0
	VPXOR        Y1, Y1, Y1
	VPSUBD       Y0, Y1, Y0    // −128 · sum
	VMOVDQU      Y0, (R11)

qstore2:
	Q8STORE(X8, Y8, qloop2)
	VZEROUPPER
	RET

qnonfinite2:
	MOVL  $0x7fc00000, AX
	VMOVD AX, X8

qzero2:
	VPXOR   Y6, Y6, Y6
	VMOVDQU Y6, (DI)
	VMOVDQU Y6, (R11)
	JMP     qstore2
