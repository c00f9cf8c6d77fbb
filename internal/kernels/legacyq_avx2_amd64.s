//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The legacy row dots with AVX2 (legacyq.go defines their arithmetic, legacyq_avx512_amd64.s
// is the AVX-512 form): four rows at a time, one block of 32 values per 256-bit register,
// even blocks into Y0-Y3 (the definition's lanes 0-7) and odd ones into Y4-Y7 (lanes 8-15).
// A block's 16 bytes of nibbles become its 32 codes in value order (the low nibbles, then
// the high ones); Q5_0 and Q5_1 add 16 where qh's bit is set (each byte of qh spread over
// eight bytes, its bits picked and compared); VPMADDUBSW and VPMADDWD by ones sum four
// products into each lane, to which Q4_0 and Q5_0 add the input's −8·Σx or −16·Σx. Then a
// convert, a multiply by d·dx and an add per lane; the types with a min add m·s to lane 0
// (a vector that is zero in the other lanes, which leaves them as they are: a lane that
// starts at +0 is never −0).

#define L2PREFETCH 1024

DATA l2Consts<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f // the nibble mask
DATA l2Consts<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA l2Consts<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA l2Consts<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA l2Consts<>+32(SB)/8, $0x0001000100010001 // words of ones
DATA l2Consts<>+40(SB)/8, $0x0001000100010001
DATA l2Consts<>+48(SB)/8, $0x0001000100010001
DATA l2Consts<>+56(SB)/8, $0x0001000100010001
DATA l2Consts<>+64(SB)/8, $0x0000000000000000 // qh byte j/8 for value j
DATA l2Consts<>+72(SB)/8, $0x0101010101010101
DATA l2Consts<>+80(SB)/8, $0x0202020202020202
DATA l2Consts<>+88(SB)/8, $0x0303030303030303
DATA l2Consts<>+96(SB)/8, $0x8040201008040201 // bit j%8 of it
DATA l2Consts<>+104(SB)/8, $0x8040201008040201
DATA l2Consts<>+112(SB)/8, $0x8040201008040201
DATA l2Consts<>+120(SB)/8, $0x8040201008040201
DATA l2Consts<>+128(SB)/8, $0x1010101010101010 // the fifth bit's 16
DATA l2Consts<>+136(SB)/8, $0x1010101010101010
DATA l2Consts<>+144(SB)/8, $0x1010101010101010
DATA l2Consts<>+152(SB)/8, $0x1010101010101010
DATA l2Consts<>+160(SB)/8, $0 // VPSRLVQ's counts: the low half as it is, the high one by 4
DATA l2Consts<>+168(SB)/8, $0
DATA l2Consts<>+176(SB)/8, $4
DATA l2Consts<>+184(SB)/8, $4
GLOBL l2Consts<>(SB), RODATA|NOPTR, $192

// L2SCALE leaves d·dx in Y8 for the block of the row at R (offset BX): d widened by
// looking it up in half.F16Table (at R13: exact, as VCVTPH2PS) and broadcast by the load.
// The loops are bound by the count of their vector operations and loads (on Zen 5 a Q4_0
// block of four rows ran 1.3× as fast without the three of a VPBROADCASTW, a VCVTPH2PS
// and the multiply), so the kernels keep their constants and the input's block in
// registers and let loads do what they can.
#define L2SCALE(R) \
	MOVWLZX      (R)(BX*1), DX; \
	VBROADCASTSS (R13)(DX*4), Y8; \
	VMULPS       (R12), Y8, Y8

// L2NIBBLES leaves the 32 nibbles of the block of the row at R (offset BX; nibbles at QS)
// in value order in Y9: the 16 bytes loaded into both halves, the high half's quadwords
// shifted right by 4 (Y12 holds the shifts; the bits shifted across bytes land in the
// high nibbles), then masked (Y13).
#define L2NIBBLES(R, QS) \
	VBROADCASTI128 QS(R)(BX*1), Y9; \
	VPSRLVQ        Y12, Y9, Y9; \
	VPAND          Y13, Y9, Y9

// L2FIFTH adds 16 to the codes whose bit is set in the block's qh (at QH).
#define L2FIFTH(R, QH) \
	VPBROADCASTD QH(R)(BX*1), Y10; \
	VPSHUFB      l2Consts<>+64(SB), Y10, Y10; \
	VPAND        l2Consts<>+96(SB), Y10, Y10; \
	VPCMPEQB     l2Consts<>+96(SB), Y10, Y10; \
	VPAND        l2Consts<>+128(SB), Y10, Y10; \
	VPOR         Y10, Y9, Y9

// L2DOT adds the block's lanes to ACC: the sums of four products (plus the shifted
// correction terms in Y15 with CORR), converted, times d·dx (Y11 holds the input's
// block, Y14 words of ones).
#define L2DOT(ACC, CORR) \
	VPMADDUBSW Y11, Y9, Y10; \
	VPMADDWD   Y14, Y10, Y10; \
	CORR; \
	VCVTDQ2PS  Y10, Y10; \
	VMULPS     Y8, Y10, Y10; \
	VADDPS     Y10, ACC, ACC

#define L2CORR VPADDD Y15, Y10, Y10
#define L2NOCORR

// L2MIN adds fp16(m)·s (m at byte 2 of the block, looked up as d is) to lane 0 of ACC:
// VMOVSS clears the other lanes, the scalar multiply keeps them clear, and +0 leaves them
// as they are.
#define L2MIN(R, ACC) \
	MOVWLZX 2(R)(BX*1), DX; \
	VMOVSS  (R13)(DX*4), X10; \
	VMULSS  (R11), X10, X10; \
	VADDPS  Y10, ACC, ACC

#define Q4_0ROW2(R, ACC) L2SCALE(R); L2NIBBLES(R, 2); L2DOT(ACC, L2CORR)
#define Q5_0ROW2(R, ACC) L2SCALE(R); L2NIBBLES(R, 6); L2FIFTH(R, 2); L2DOT(ACC, L2CORR)
#define Q4_1ROW2(R, ACC) L2SCALE(R); L2NIBBLES(R, 4); L2DOT(ACC, L2NOCORR); L2MIN(R, ACC)
#define Q5_1ROW2(R, ACC) L2SCALE(R); L2NIBBLES(R, 8); L2FIFTH(R, 4); L2DOT(ACC, L2NOCORR); L2MIN(R, ACC)

// L2PREFETCH4 asks for the four rows' bytes L2PREFETCH on into L1: once per pair of
// blocks (36-48 bytes of a row), where once per block asked for most lines three times.
#define L2PREFETCH4 \
	PREFETCHT0 L2PREFETCH(SI)(BX*1); \
	PREFETCHT0 L2PREFETCH(R8)(BX*1); \
	PREFETCHT0 L2PREFETCH(R9)(BX*1); \
	PREFETCHT0 L2PREFETCH(R10)(BX*1)

// L2BLOCK runs one block of the four rows into the accumulators A0-A3, with the input's
// correction terms shifted right by CSHIFT in Y15, then moves to the next block.
#define L2BLOCK(ROW, BB, CSHIFT, A0, A1, A2, A3) \
	VMOVDQU (DI), Y11; \
	VMOVDQU (R14), Y15; \
	VPSRAD  $CSHIFT, Y15, Y15; \
	ROW(SI, A0); \
	ROW(R8, A1); \
	ROW(R9, A2); \
	ROW(R10, A3); \
	ADDQ    $BB, BX; \
	ADDQ    $32, DI; \
	ADDQ    $32, R14; \
	ADDQ    $32, R12; \
	ADDQ    $32, R11

// L2SETUP loads the arguments (as LSETUP in legacyq_avx512_amd64.s) and the constants of
// L2NIBBLES and L2DOT and the table of L2SCALE, and zeroes the accumulators.
#define L2SETUP \
	MOVQ    ·f16TableBase(SB), R13; \
	VMOVDQU l2Consts<>+0(SB), Y13; \
	VMOVDQU l2Consts<>+160(SB), Y12; \
	VMOVDQU l2Consts<>+32(SB), Y14; \
	MOVQ   w+8(FP), SI; \
	MOVQ   xq+16(FP), DI; \
	MOVQ   corr+24(FP), R14; \
	MOVQ   dl+32(FP), R12; \
	MOVQ   sl+40(FP), R11; \
	MOVQ   stride+56(FP), AX; \
	LEAQ   (SI)(AX*1), R8; \
	LEAQ   (R8)(AX*1), R9; \
	LEAQ   (R9)(AX*1), R10; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	XORQ   BX, BX; \
	MOVQ   nb+48(FP), CX; \
	SHRQ   $1, CX

// L2FINISH folds the even and odd blocks' lanes and stores ReduceLanes of the four rows at
// out + k·outStride·4.
#define L2FINISH \
	VADDPS Y4, Y0, Y0; \
	VADDPS Y5, Y1, Y1; \
	VADDPS Y6, Y2, Y2; \
	VADDPS Y7, Y3, Y3; \
	REDUCE8(Y0, X0, X8); \
	REDUCE8(Y1, X1, X9); \
	REDUCE8(Y2, X2, X10); \
	REDUCE8(Y3, X3, X11); \
	MOVQ   out+0(FP), DX; \
	MOVQ   outStride+64(FP), CX; \
	SHLQ   $2, CX; \
	VMOVSS X0, (DX); \
	ADDQ   CX, DX; \
	VMOVSS X1, (DX); \
	ADDQ   CX, DX; \
	VMOVSS X2, (DX); \
	ADDQ   CX, DX; \
	VMOVSS X3, (DX); \
	VZEROUPPER

// func dotQ4_0Q8x4AVX2(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)
TEXT ·dotQ4_0Q8x4AVX2(SB), NOSPLIT, $0-80
	L2SETUP
	TESTQ CX, CX
	JZ    l40last

l40pairs:
	L2PREFETCH4
	L2BLOCK(Q4_0ROW2, 18, 4, Y0, Y1, Y2, Y3)
	L2BLOCK(Q4_0ROW2, 18, 4, Y4, Y5, Y6, Y7)
	DECQ CX
	JNZ  l40pairs

l40last:
	MOVQ  nb+48(FP), AX
	TESTQ $1, AX
	JZ    l40done
	L2BLOCK(Q4_0ROW2, 18, 4, Y0, Y1, Y2, Y3)

l40done:
	L2FINISH
	RET

// func dotQ4_1Q8x4AVX2(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)
TEXT ·dotQ4_1Q8x4AVX2(SB), NOSPLIT, $0-80
	L2SETUP
	TESTQ CX, CX
	JZ    l41last

l41pairs:
	L2PREFETCH4
	L2BLOCK(Q4_1ROW2, 20, 0, Y0, Y1, Y2, Y3)
	L2BLOCK(Q4_1ROW2, 20, 0, Y4, Y5, Y6, Y7)
	DECQ CX
	JNZ  l41pairs

l41last:
	MOVQ  nb+48(FP), AX
	TESTQ $1, AX
	JZ    l41done
	L2BLOCK(Q4_1ROW2, 20, 0, Y0, Y1, Y2, Y3)

l41done:
	L2FINISH
	RET

// func dotQ5_0Q8x4AVX2(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)
TEXT ·dotQ5_0Q8x4AVX2(SB), NOSPLIT, $0-80
	L2SETUP
	TESTQ CX, CX
	JZ    l50last

l50pairs:
	L2PREFETCH4
	L2BLOCK(Q5_0ROW2, 22, 3, Y0, Y1, Y2, Y3)
	L2BLOCK(Q5_0ROW2, 22, 3, Y4, Y5, Y6, Y7)
	DECQ CX
	JNZ  l50pairs

l50last:
	MOVQ  nb+48(FP), AX
	TESTQ $1, AX
	JZ    l50done
	L2BLOCK(Q5_0ROW2, 22, 3, Y0, Y1, Y2, Y3)

l50done:
	L2FINISH
	RET

// func dotQ5_1Q8x4AVX2(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)
TEXT ·dotQ5_1Q8x4AVX2(SB), NOSPLIT, $0-80
	L2SETUP
	TESTQ CX, CX
	JZ    l51last

l51pairs:
	L2PREFETCH4
	L2BLOCK(Q5_1ROW2, 24, 0, Y0, Y1, Y2, Y3)
	L2BLOCK(Q5_1ROW2, 24, 0, Y4, Y5, Y6, Y7)
	DECQ CX
	JNZ  l51pairs

l51last:
	MOVQ  nb+48(FP), AX
	TESTQ $1, AX
	JZ    l51done
	L2BLOCK(Q5_1ROW2, 24, 0, Y0, Y1, Y2, Y3)

l51done:
	L2FINISH
	RET
