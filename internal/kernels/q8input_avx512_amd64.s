//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"
#include "q8input_amd64.h"

#define PREFETCH_AHEAD 2048

// q8ScaleIndex selects, for VPERMW over the first 64 bytes of a pair of Q8_0 blocks, the
// first block's fp16 scale (word 0) into words 0-7 and the second block's (word 17, at byte
// 34) into words 8-15; the upper 256 bits are not used. gemmq8_avx512_amd64.s reads it too.
DATA ·q8ScaleIndex+0(SB)/8, $0x0000000000000000
DATA ·q8ScaleIndex+8(SB)/8, $0x0000000000000000
DATA ·q8ScaleIndex+16(SB)/8, $0x0011001100110011
DATA ·q8ScaleIndex+24(SB)/8, $0x0011001100110011
DATA ·q8ScaleIndex+32(SB)/8, $0x0000000000000000
DATA ·q8ScaleIndex+40(SB)/8, $0x0000000000000000
DATA ·q8ScaleIndex+48(SB)/8, $0x0000000000000000
DATA ·q8ScaleIndex+56(SB)/8, $0x0000000000000000
GLOBL ·q8ScaleIndex(SB), RODATA|NOPTR, $64

// Q8Q8PAIR adds one row's pair of blocks (at R, byte offset BX) to ACC: lanes 0-7 the first
// block's, 8-15 the second's, each lane float32(float32(p)·s) with p the integer sum of four
// products and s = dw·dx. The weights are made unsigned (XOR 0x80, that is +128) for
// VPDPBUSD, whose sum then starts from the input's −128·Σxq (CORR) to cancel the offset.
// DI addresses the pair's 64 input values, R14 its sixteen correction terms, R12 its
// sixteen scales. S, W, I are scratch.
#define Q8Q8PAIR(R, S, SY, W, WY, I, ACC) \
	VPERMW       (R)(BX*1), Z30, S; \
	VCVTPH2PS    SY, S; \
	VMULPS       (R12), S, S; \
	VMOVDQU      2(R)(BX*1), WY; \
	VINSERTI32X8 $1, 36(R)(BX*1), W, W; \
	VPXORD       Z31, W, W; \
	VMOVDQU32    (R14), I; \
	VPDPBUSD     (DI), W, I; \
	VCVTDQ2PS    I, I; \
	VMULPS       S, I, I; \
	VADDPS       I, ACC, ACC

// Q8Q8LAST adds one row's last block (an odd one out, at R, byte offset BX) to the lanes 0-7
// in ACC, with 256-bit instructions (which clear the upper half of the register).
#define Q8Q8LAST(R, SX, SY, WY, IY, ACC) \
	VPBROADCASTW (R)(BX*1), SX; \
	VCVTPH2PS    SX, SY; \
	VMULPS       (R12), SY, SY; \
	VMOVDQU      2(R)(BX*1), WY; \
	VPXORD       Y31, WY, WY; \
	VMOVDQU      (R14), IY; \
	VPDPBUSD     (DI), WY, IY; \
	VCVTDQ2PS    IY, IY; \
	VMULPS       SY, IY, IY; \
	VADDPS       IY, ACC, ACC

// func dotQ8_0Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl *float32, nb, stride, outStride int)
//
// Four Q8_0 rows (w, w+stride, w+2·stride, w+3·stride) against one Q8Input, each row in its
// own ZMM accumulator (Z0..Z3), two blocks per step; then the lanes are folded as
// acc[l]+acc[l+8] after an odd last block went into lanes 0-7, and summed by REDUCE8.
// R15 is BX plus PREFETCH_AHEAD, the offset the loop prefetches in each stream.
TEXT ·dotQ8_0Q8x4AVX512(SB), NOSPLIT, $0-64
	VMOVDQU64 ·q8ScaleIndex(SB), Z30
	MOVL      $0x80808080, AX
	VPBROADCASTD AX, Z31
	MOVQ   out+0(FP), DX
	MOVQ   w+8(FP), SI
	MOVQ   xq+16(FP), DI
	MOVQ   corr+24(FP), R14
	MOVQ   dl+32(FP), R12
	MOVQ   nb+40(FP), CX
	MOVQ   stride+48(FP), R11
	MOVQ   outStride+56(FP), R13
	SHLQ   $2, R13
	LEAQ   (SI)(R11*1), R8
	LEAQ   (R8)(R11*1), R9
	LEAQ   (R9)(R11*1), R10
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   BX, BX
	MOVQ   $PREFETCH_AHEAD, R15
	MOVQ   CX, AX
	SHRQ   $1, AX
	JZ     last

pairs:
	PREFETCHT1 (SI)(R15*1)
	PREFETCHT1 (R8)(R15*1)
	PREFETCHT1 (R9)(R15*1)
	PREFETCHT1 (R10)(R15*1)
	PREFETCHT1 64(SI)(R15*1)
	PREFETCHT1 64(R8)(R15*1)
	PREFETCHT1 64(R9)(R15*1)
	PREFETCHT1 64(R10)(R15*1)
	Q8Q8PAIR(SI, Z4, Y4, Z8, Y8, Z12, Z0)
	Q8Q8PAIR(R8, Z5, Y5, Z9, Y9, Z13, Z1)
	Q8Q8PAIR(R9, Z6, Y6, Z10, Y10, Z14, Z2)
	Q8Q8PAIR(R10, Z7, Y7, Z11, Y11, Z15, Z3)
	ADDQ $68, BX
	ADDQ $68, R15
	ADDQ $64, DI
	ADDQ $64, R14
	ADDQ $64, R12
	DECQ AX
	JNZ  pairs

last:
	VEXTRACTF64X4 $1, Z0, Y16
	VEXTRACTF64X4 $1, Z1, Y17
	VEXTRACTF64X4 $1, Z2, Y18
	VEXTRACTF64X4 $1, Z3, Y19
	TESTQ $1, CX
	JZ    fold
	Q8Q8LAST(SI, X4, Y4, Y8, Y12, Y0)
	Q8Q8LAST(R8, X5, Y5, Y9, Y13, Y1)
	Q8Q8LAST(R9, X6, Y6, Y10, Y14, Y2)
	Q8Q8LAST(R10, X7, Y7, Y11, Y15, Y3)

fold:
	VADDPS Y16, Y0, Y0
	VADDPS Y17, Y1, Y1
	VADDPS Y18, Y2, Y2
	VADDPS Y19, Y3, Y3
	REDUCE8(Y0, X0, X8)
	REDUCE8(Y1, X1, X9)
	REDUCE8(Y2, X2, X10)
	REDUCE8(Y3, X3, X11)
	VMOVSS X0, (DX)
	ADDQ   R13, DX
	VMOVSS X1, (DX)
	ADDQ   R13, DX
	VMOVSS X2, (DX)
	ADDQ   R13, DX
	VMOVSS X3, (DX)
	VZEROUPPER
	RET

// func quantizeQ8AVX512(x *float32, nb int, qs *int8, d, dLanes *float32, corr *int32, amax *float32)
//
// Q8Input.Quantize's blocks, one per iteration, with quantizeBlocksGeneric's arithmetic:
// the largest |x| as the largest bit pattern without the sign (VPMAXUD), d = fp16(amax/127)
// (VDIVSS, then VCVTPS2PH with round-to-nearest-even and back), id = 127/amax, q =
// (x·id + 1.5·2^23) − 1.5·2^23 truncated to int32 (an exact integer by then), stored as
// bytes; the correction terms −128·Σ of four q by VPDPBUSD with ones. A
// block with a NaN or an infinity gets d = NaN (0x7fc00000, what float32(math.NaN()) is)
// and zeros; a block whose d is 0 gets zeros. Each block's amax is stored too.
TEXT ·quantizeQ8AVX512(SB), NOSPLIT, $0-56
	Q8QUANTARGS
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x4b400000, AX // 1.5·2^23
	VPBROADCASTD AX, Z30
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Y29
	MOVL         $0x42fe0000, AX // 127.0
	VMOVD        AX, X28

qloop:
	VMOVUPS       (SI), Z0
	VMOVUPS       64(SI), Z1
	VPANDD        Z31, Z0, Z2
	VPANDD        Z31, Z1, Z3
	VPMAXUD       Z3, Z2, Z2
	VEXTRACTI64X4 $1, Z2, Y3
	VPMAXUD       Y3, Y2, Y2
	VEXTRACTI128  $1, Y2, X3
	VPMAXUD       X3, X2, X2
	VPSHUFD       $0x4e, X2, X3
	VPMAXUD       X3, X2, X2
	VPSHUFD       $0xb1, X2, X3
	VPMAXUD       X3, X2, X2
	Q8SCALE(X2, X28, X4, X5, qnonfinite, qzero) // d in X4, id in X5
	VBROADCASTSS  X5, Z5
	VMULPS        Z5, Z0, Z0
	VMULPS        Z5, Z1, Z1
	VADDPS        Z30, Z0, Z0
	VADDPS        Z30, Z1, Z1
	VSUBPS        Z30, Z0, Z0
	VSUBPS        Z30, Z1, Z1
	VCVTTPS2DQ    Z0, Z0
	VCVTTPS2DQ    Z1, Z1
	VPMOVDB       Z0, (DI)
	VPMOVDB       Z1, 16(DI)
	VMOVDQU       (DI), Y6
	VPXORD        Y7, Y7, Y7
	VPDPBUSD      Y6, Y29, Y7 // sums of four q (ones × q)
	VPSLLD        $7, Y7, Y7
	VPXORD        Y8, Y8, Y8
	VPSUBD        Y7, Y8, Y7  // −128 · sum
	VMOVDQU       Y7, (R11)

qstore:
	Q8STORE(X4, Y4, qloop)
	VZEROUPPER
	RET

qnonfinite:
	MOVL $0x7fc00000, AX
	VMOVD AX, X4

qzero:
	VPXORD  Y6, Y6, Y6
	VMOVDQU Y6, (DI)
	VMOVDQU Y6, (R11)
	JMP     qstore
