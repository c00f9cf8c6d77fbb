//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The legacy row dots (Q4_0, Q4_1, Q5_0, Q5_1 against a Q8Input; legacyq.go defines their
// arithmetic) with AVX-512 VNNI: four rows at a time, two blocks per 512-bit register, as
// DotQ8_0Q8's kernel (q8input_avx512_amd64.s) does. A pair of blocks is loaded with a byte
// mask (the last, odd block alone: the mask stops at the row's end), its nibbles spread to
// the 64 values' bytes by VPERMW and a shift, the fifth bits (Q5_0, Q5_1) added as 16
// where a mask bit is set, and VPDPBUSD sums the products of four values into each lane,
// starting from the input's −8·Σx or −16·Σx (Q4_0, Q5_0: the codes' offset). Then each
// lane costs a convert, a multiply by d·dx and an add; the types with a min add m·s to
// lanes 0 and 8 with a masked add.
//
// Each kernel takes the rows at w + k·stride (k = 0..3), the input's codes xq, correction
// terms corr, scales eight to a block dl and Q8_1 sums eight to a block sl, nb > 0 blocks,
// and a table of VPERMW indexes for its block layout (legacyIdx in legacyq_amd64.go): the
// codes (64 bytes), the scales d (32), the mins m (32) and the fifth bits (32).

#define LPREFETCH 2048

// lShift04 shifts the words of the four 128-bit lanes right by 0, 4, 0, 4: each block's
// 16 bytes of nibbles, copied to two lanes, become its low and its high nibbles.
DATA lShift04<>+0(SB)/8, $0
DATA lShift04<>+8(SB)/8, $0
DATA lShift04<>+16(SB)/8, $0x0004000400040004
DATA lShift04<>+24(SB)/8, $0x0004000400040004
DATA lShift04<>+32(SB)/8, $0
DATA lShift04<>+40(SB)/8, $0
DATA lShift04<>+48(SB)/8, $0x0004000400040004
DATA lShift04<>+56(SB)/8, $0x0004000400040004
GLOBL lShift04<>(SB), RODATA|NOPTR, $64

// LSETUP loads the arguments and constants: rows SI, R8, R9, R10; input DI (codes), R14
// (correction terms), R12 (scales), R11 (sums); CX the number of pairs; BX = 0 the offset
// in the rows; Z31 = 0x0f…, Z30 = lShift04, Z29-Z26 the layout's indexes (codes, d, m,
// fifth bits), Z25 = 0x10…; K1, K2, K3 the masks of a full pair (2·BB bytes of weights, 64
// bytes of input codes, 16 dwords), K4 = lanes 0 and 8; the accumulators Z16-Z19 zeroed.
#define LSETUP(BB) \
	MOVQ         w+8(FP), SI; \
	MOVQ         xq+16(FP), DI; \
	MOVQ         corr+24(FP), R14; \
	MOVQ         dl+32(FP), R12; \
	MOVQ         sl+40(FP), R11; \
	MOVQ         stride+56(FP), AX; \
	LEAQ         (SI)(AX*1), R8; \
	LEAQ         (R8)(AX*1), R9; \
	LEAQ         (R9)(AX*1), R10; \
	MOVQ         idx+72(FP), AX; \
	VMOVDQU64    (AX), Z29; \
	VMOVDQU64    64(AX), Z28; \
	VMOVDQU64    128(AX), Z27; \
	VMOVDQU64    192(AX), Z26; \
	MOVL         $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z31; \
	MOVL         $0x10101010, AX; \
	VPBROADCASTD AX, Z25; \
	VMOVDQU64    lShift04<>(SB), Z30; \
	MOVQ         $((1<<(2*BB))-1), AX; \
	KMOVQ        AX, K1; \
	KXNORQ       K2, K2, K2; \
	MOVL         $0xffff, AX; \
	KMOVW        AX, K3; \
	MOVL         $0x0101, AX; \
	KMOVW        AX, K4; \
	VPXORD       Z16, Z16, Z16; \
	VPXORD       Z17, Z17, Z17; \
	VPXORD       Z18, Z18, Z18; \
	VPXORD       Z19, Z19, Z19; \
	XORQ         BX, BX; \
	MOVQ         nb+48(FP), CX; \
	SHRQ         $1, CX

// LINPUT loads the input of a pair of blocks with the masks K2 (codes) and K3 (dwords):
// codes Z20, correction terms Z21 shifted right by CSHIFT (0: none, which the types with a
// min ignore), scales Z22, sums Z23.
#define LINPUT(CSHIFT) \
	VMOVDQU8.Z  (DI), K2, Z20; \
	VMOVDQU32.Z (R14), K3, Z21; \
	VPSRAD      $CSHIFT, Z21, Z21; \
	VMOVUPS.Z   (R12), K3, Z22; \
	VMOVUPS.Z   (R11), K3, Z23

// LCODES loads the pair of blocks of the row at R (mask K1) into Z1, and leaves its 64
// nibbles, in value order, in Z3; d·dx in Z2.
#define LCODES(R) \
	PREFETCHT0  LPREFETCH(R)(BX*1); \
	VMOVDQU8.Z  (R)(BX*1), K1, Z1; \
	VPERMW      Z1, Z28, Z2; \
	VCVTPH2PS   Y2, Z2; \
	VMULPS      Z22, Z2, Z2; \
	VPERMW      Z1, Z29, Z3; \
	VPSRLVW     Z30, Z3, Z3; \
	VPANDD      Z31, Z3, Z3

// LFIFTH adds 16 to the codes whose fifth bit is set: the two blocks' qh words gathered
// into a quadword (Z26) and moved to the mask K5.
#define LFIFTH \
	VPERMW  Z1, Z26, Z4; \
	VMOVQ   X4, AX; \
	KMOVQ   AX, K5; \
	VPADDB  Z25, Z3, K5, Z3

// LDOT adds the lanes of the pair to ACC: the sums of four products starting from START
// (the shifted correction terms, or zero), converted, times d·dx.
#define LDOT(START, ACC) \
	START; \
	VPDPBUSD  Z20, Z3, Z4; \
	VCVTDQ2PS Z4, Z4; \
	VMULPS    Z2, Z4, Z4; \
	VADDPS    Z4, ACC, ACC

#define LSTARTCORR VMOVDQA64 Z21, Z4
#define LSTARTZERO VPXORD Z4, Z4, Z4

// LMIN adds m·s to lanes 0 and 8 of ACC (mask K4).
#define LMIN(ACC) \
	VPERMW    Z1, Z27, Z5; \
	VCVTPH2PS Y5, Z5; \
	VMULPS    Z23, Z5, Z5; \
	VADDPS    Z5, ACC, K4, ACC

// LADVANCE moves to the next pair of blocks.
#define LADVANCE(BB) \
	ADDQ $(2*BB), BX; \
	ADDQ $64, DI; \
	ADDQ $64, R14; \
	ADDQ $64, R12; \
	ADDQ $64, R11

// LLASTMASKS sets the masks for an odd last block: BB bytes of weights, 32 bytes of input
// codes, 8 dwords.
#define LLASTMASKS(BB) \
	MOVQ  $((1<<BB)-1), AX; \
	KMOVQ AX, K1; \
	MOVL  $0xffffffff, AX; \
	KMOVQ AX, K2; \
	MOVL  $0xff, AX; \
	KMOVW AX, K3

// LFINISH folds each accumulator's lanes l and l+8 and stores ReduceLanes of the four rows
// at out + k·outStride·4.
#define LFINISH \
	VEXTRACTF64X4 $1, Z16, Y4; \
	VADDPS        Y4, Y16, Y0; \
	VEXTRACTF64X4 $1, Z17, Y5; \
	VADDPS        Y5, Y17, Y1; \
	VEXTRACTF64X4 $1, Z18, Y6; \
	VADDPS        Y6, Y18, Y2; \
	VEXTRACTF64X4 $1, Z19, Y7; \
	VADDPS        Y7, Y19, Y3; \
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

// The four rows of one pair, per type.
#define Q4_0ROW(R, ACC) LCODES(R); LDOT(LSTARTCORR, ACC)
#define Q5_0ROW(R, ACC) LCODES(R); LFIFTH; LDOT(LSTARTCORR, ACC)
#define Q4_1ROW(R, ACC) LCODES(R); LDOT(LSTARTZERO, ACC); LMIN(ACC)
#define Q5_1ROW(R, ACC) LCODES(R); LFIFTH; LDOT(LSTARTZERO, ACC); LMIN(ACC)

#define LPAIR(ROW, CSHIFT) \
	LINPUT(CSHIFT); \
	ROW(SI, Z16); \
	ROW(R8, Z17); \
	ROW(R9, Z18); \
	ROW(R10, Z19)

// func dotQ4_0Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)
TEXT ·dotQ4_0Q8x4AVX512(SB), NOSPLIT, $0-80
	LSETUP(18)
	TESTQ CX, CX
	JZ    q40last

q40pairs:
	LPAIR(Q4_0ROW, 4)
	LADVANCE(18)
	DECQ CX
	JNZ  q40pairs

q40last:
	MOVQ  nb+48(FP), AX
	TESTQ $1, AX
	JZ    q40done
	LLASTMASKS(18)
	LPAIR(Q4_0ROW, 4)

q40done:
	LFINISH
	RET

// func dotQ4_1Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)
TEXT ·dotQ4_1Q8x4AVX512(SB), NOSPLIT, $0-80
	LSETUP(20)
	TESTQ CX, CX
	JZ    q41last

q41pairs:
	LPAIR(Q4_1ROW, 0)
	LADVANCE(20)
	DECQ CX
	JNZ  q41pairs

q41last:
	MOVQ  nb+48(FP), AX
	TESTQ $1, AX
	JZ    q41done
	LLASTMASKS(20)
	LPAIR(Q4_1ROW, 0)

q41done:
	LFINISH
	RET

// func dotQ5_0Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)
TEXT ·dotQ5_0Q8x4AVX512(SB), NOSPLIT, $0-80
	LSETUP(22)
	TESTQ CX, CX
	JZ    q50last

q50pairs:
	LPAIR(Q5_0ROW, 3)
	LADVANCE(22)
	DECQ CX
	JNZ  q50pairs

q50last:
	MOVQ  nb+48(FP), AX
	TESTQ $1, AX
	JZ    q50done
	LLASTMASKS(22)
	LPAIR(Q5_0ROW, 3)

q50done:
	LFINISH
	RET

// func dotQ5_1Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)
TEXT ·dotQ5_1Q8x4AVX512(SB), NOSPLIT, $0-80
	LSETUP(24)
	TESTQ CX, CX
	JZ    q51last

q51pairs:
	LPAIR(Q5_1ROW, 0)
	LADVANCE(24)
	DECQ CX
	JNZ  q51pairs

q51last:
	MOVQ  nb+48(FP), AX
	TESTQ $1, AX
	JZ    q51done
	LLASTMASKS(24)
	LPAIR(Q5_1ROW, 0)

q51done:
	LFINISH
	RET
