//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The batched Q8_0 × Q8_0 product (gemmq8_amd64.go) with AVX-512 VNNI: two weight rows
// against four quantized input vectors, each (row, input) in one ZMM accumulator whose
// lanes 0-7 collect the even blocks and 8-15 the odd ones, DotQ8_0Q8's arithmetic lane for
// lane. A pair of blocks of a row is prepared once (its fp16 scales widened by VPERMW and
// VCVTPH2PS, its 64 weights made unsigned) and meets the four inputs, whose values,
// correction terms and scales packQ8Inputs4 interleaves, 768 bytes per pair of blocks.
// gemmQ4_0x2x4VNNI is the same product for Q4_0 rows, read where they lie: a pair of
// blocks' nibbles are spread to the 64 codes as the legacy row dots spread them
// (legacyq_avx512_amd64.s), and the codes less 8 plus 128 (q + 120) are the unsigned
// weights, so that the same correction terms cancel the same +128.

// Q8ROWPAIR prepares one row's pair of blocks at R (byte offset BX): S its two scales (dw,
// eight lanes each, picked by q8ScaleIndex in Z30), W its 64 weights XOR 0x80 (that is
// +128, unsigned for VPDPBUSD).
#define Q8ROWPAIR(R, S, SY, W, WY) \
	VPERMW       (R)(BX*1), Z30, S; \
	VCVTPH2PS    SY, S; \
	VMOVDQU      2(R)(BX*1), WY; \
	VINSERTI32X8 $1, 36(R)(BX*1), W, W; \
	VPXORD       Z31, W, W

// Q8PAIR adds a (row, input) pair of blocks to ACC: I starts at the input's correction
// terms (−128·Σxq per four values, cancelling the +128 of the weights), VPDPBUSD adds the
// four products of each lane, then float32(float32(p)·s) with s = dw·dx is added.
#define Q8PAIR(W, S, X, C, D, I, T, ACC) \
	VMOVDQA32 C, I; \
	VPDPBUSD  X, W, I; \
	VCVTDQ2PS I, I; \
	VMULPS    D, S, T; \
	VMULPS    T, I, I; \
	VADDPS    I, ACC, ACC

// Q8ROWLAST and Q8LAST are Q8ROWPAIR and Q8PAIR for a last, odd block (lanes 0-7 only),
// in 256-bit registers; the token data is then 32 bytes per input.
#define Q8ROWLAST(R, SX, SY, SZ, WY, WZ) \
	VPBROADCASTW (R)(BX*1), SX; \
	VCVTPH2PS    SX, SY; \
	VMOVDQU      2(R)(BX*1), WY; \
	VPXORD       Y31, WY, WY

// Q4ROWPAIR is Q8ROWPAIR for a pair of Q4_0 blocks (36 bytes, loaded with the mask K1):
// the scales picked by the VPERMW indexes in Z30, the nibbles by those in Z28 (each
// block's 16 bytes twice), the words of the second and fourth 128-bit lanes shifted right
// by 4 (mask K3), the low nibbles kept (Z29) and 120 added (Z31). Q4ROWLAST is the same
// for an odd last block (mask K2: 18 bytes), whose lanes 0-7 Q8LAST takes.
#define Q4ROWPAIRK(K, R, S, SY, W) \
	VMOVDQU8.Z (R)(BX*1), K, W; \
	VPERMW     W, Z30, S; \
	VCVTPH2PS  SY, S; \
	VPERMW     W, Z28, W; \
	VPSRLW     $4, W, K3, W; \
	VPANDD     Z29, W, W; \
	VPADDB     Z31, W, W

#define Q4ROWPAIR(R, S, SY, W, WY) Q4ROWPAIRK(K1, R, S, SY, W)
#define Q4ROWLAST(R, SX, SY, SZ, WY, WZ) Q4ROWPAIRK(K2, R, SZ, SY, WZ)

// q5Sixteen is 16 in every byte: a Q5_0 code's fifth bit.
DATA q5Sixteen<>+0(SB)/4, $0x10101010
GLOBL q5Sixteen<>(SB), RODATA|NOPTR, $4

// Q5ROWPAIR is Q4ROWPAIR for a pair of Q5_0 blocks (44 bytes, mask K1; the nibbles at byte
// 6 of each block): the two blocks' qh (bit j: value j's fifth bit) joined in K5 (QH, by
// KUNPCKDQ, or the one block's alone), 16 added to the codes whose bit is set, and 112
// (Z31: 128 less the offset 16) to all. Q5ROWLAST is the odd last block (K2: 22 bytes).
#define Q5ROWPAIRK(K, QH, R, S, SY, W) \
	VMOVDQU8.Z    (R)(BX*1), K, W; \
	VPERMW        W, Z30, S; \
	VCVTPH2PS     SY, S; \
	QH; \
	VPERMW        W, Z28, W; \
	VPSRLW        $4, W, K3, W; \
	VPANDD        Z29, W, W; \
	VPBROADCASTD  q5Sixteen<>(SB), Z24; \
	VPADDB        Z24, W, K5, W; \
	VPADDB        Z31, W, W

#define Q5QH2(R) KMOVD 2(R)(BX*1), K5; KMOVD 24(R)(BX*1), K6; KUNPCKDQ K5, K6, K5
#define Q5QH1(R) KMOVD 2(R)(BX*1), K5

#define Q5ROWPAIR(R, S, SY, W, WY) Q5ROWPAIRK(K1, Q5QH2(R), R, S, SY, W)
#define Q5ROWLAST(R, SX, SY, SZ, WY, WZ) Q5ROWPAIRK(K2, Q5QH1(R), R, SZ, SY, WZ)

#define Q8LAST(WY, SY, XO, IY, TY, ACC) \
	VMOVDQU32 XO+128(DI), IY; \
	VPDPBUSD  XO(DI), WY, IY; \
	VCVTDQ2PS IY, IY; \
	VMULPS    XO+256(DI), SY, TY; \
	VMULPS    TY, IY, IY; \
	VADDPS    IY, ACC, ACC

// REDUCEQ8 folds (row r, input t)'s sixteen lanes as acc[l] + acc[l+8] (the high half
// saved in H before the odd block, if any, went into the low half) and REDUCE8s them.
#define REDUCEQ8(Y, H, X) \
	VADDPS H, Y, Y; \
	REDUCE8(Y, X, X12)

// STOREQ8 folds and reduces the two rows' accumulators of one input (A with its saved high
// half HA, B with HB) and stores them side by side at R10.
#define STOREQ8(A, HA, XA, B, HB, XB) \
	REDUCEQ8(A, HA, XA); \
	REDUCEQ8(B, HB, XB); \
	VMOVSS XA, (R10); \
	VMOVSS XB, 4(R10)

// LEGACYSETUP loads the direct legacy kernels' constants: from the legacy row dots' table at
// idx the codes' VPERMW indexes (Z28) and the scales' (Z30), 0x0f in every byte (Z29), OFFSET
// (128 less the type's offset) in every byte (Z31), the masks of a pair of blocks (K1:
// PAIRMASK) and of one (K2: BLOCKMASK), and K3 the words of the 128-bit lanes 1 and 3.
#define LEGACYSETUP(OFFSET, PAIRMASK, BLOCKMASK) \
	MOVQ         idx+72(FP), AX; \
	VMOVDQU64    (AX), Z28; \
	VMOVDQU64    64(AX), Z30; \
	MOVL         $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z29; \
	MOVL         $OFFSET, AX; \
	VPBROADCASTD AX, Z31; \
	MOVQ         $PAIRMASK, AX; \
	KMOVQ        AX, K1; \
	MOVL         $BLOCKMASK, AX; \
	KMOVQ        AX, K2; \
	MOVL         $0xff00ff00, AX; \
	KMOVD        AX, K3

// GEMMQ8TILES is the kernels' loop over tiles pairs of rows (ROWPAIR and ROWLAST prepare a
// row's pair of blocks and its odd last block, PB bytes a pair of blocks), its labels
// passed in. Z0..Z7 are the accumulators (row r, input j in Z(4r+j)), Z8/Z9 the rows'
// weights, Z10/Z11 their scales, Z12..Z15 the inputs' values, Z16..Z19 their correction
// terms, Z20..Z23 their scales, Z24..Z27 scratch, Z28..Z31 the format's constants. SI and
// R8 are the rows, BX the offset of the current pair, DI the packed inputs, CX the pairs
// left, R12 the tiles left, AX the pair of rows' first output, DX the carried
// accumulators. R14 and R11 are the next pair of rows, read into L2 a line per row and
// pair of blocks: the first group of inputs to meet a block of rows otherwise waited for
// memory at every pair (TinyLlama q8_0 decode step on Zen 4, 2 threads: batch 4 85–87 →
// 64–70 ms, 16 208–223 → 169–176).
#define GEMMQ8TILES(ROWPAIR, ROWLAST, PB, TILE, CARRIED, BEGIN, PAIRS, LAST, REDUCE, FOLD, NEXT) \
	MOVQ tiles+48(FP), R12; \
	MOVQ out+0(FP), AX; \
	MOVQ w+16(FP), SI; \
	MOVQ rb+24(FP), R9; \
	MOVQ outStride+8(FP), R13; \
	SHLQ $2, R13; \
	MOVQ acc+56(FP), DX; \
TILE: \
	LEAQ   (SI)(R9*1), R8; \
	LEAQ   (R8)(R9*1), R14; \
	LEAQ   (R14)(R9*1), R11; \
	MOVQ   xp+32(FP), DI; \
	MOVQ   nb+40(FP), CX; \
	SHRQ   $1, CX; \
	XORQ   BX, BX; \
	TESTQ  $1, flags+64(FP); \
	JNZ    CARRIED; \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	JMP    BEGIN; \
CARRIED: \
	VMOVUPS (DX), Z0; \
	VMOVUPS 64(DX), Z1; \
	VMOVUPS 128(DX), Z2; \
	VMOVUPS 192(DX), Z3; \
	VMOVUPS 256(DX), Z4; \
	VMOVUPS 320(DX), Z5; \
	VMOVUPS 384(DX), Z6; \
	VMOVUPS 448(DX), Z7; \
BEGIN: \
	TESTQ CX, CX; \
	JZ    LAST; \
PAIRS: \
	PREFETCHT1 (R14)(BX*1); \
	PREFETCHT1 (R11)(BX*1); \
	ROWPAIR(SI, Z10, Y10, Z8, Y8); \
	ROWPAIR(R8, Z11, Y11, Z9, Y9); \
	VMOVDQU32 (DI), Z12; \
	VMOVDQU32 64(DI), Z13; \
	VMOVDQU32 128(DI), Z14; \
	VMOVDQU32 192(DI), Z15; \
	VMOVDQU32 256(DI), Z16; \
	VMOVDQU32 320(DI), Z17; \
	VMOVDQU32 384(DI), Z18; \
	VMOVDQU32 448(DI), Z19; \
	VMOVUPS   512(DI), Z20; \
	VMOVUPS   576(DI), Z21; \
	VMOVUPS   640(DI), Z22; \
	VMOVUPS   704(DI), Z23; \
	Q8PAIR(Z8, Z10, Z12, Z16, Z20, Z24, Z26, Z0); \
	Q8PAIR(Z8, Z10, Z13, Z17, Z21, Z25, Z27, Z1); \
	Q8PAIR(Z8, Z10, Z14, Z18, Z22, Z24, Z26, Z2); \
	Q8PAIR(Z8, Z10, Z15, Z19, Z23, Z25, Z27, Z3); \
	Q8PAIR(Z9, Z11, Z12, Z16, Z20, Z24, Z26, Z4); \
	Q8PAIR(Z9, Z11, Z13, Z17, Z21, Z25, Z27, Z5); \
	Q8PAIR(Z9, Z11, Z14, Z18, Z22, Z24, Z26, Z6); \
	Q8PAIR(Z9, Z11, Z15, Z19, Z23, Z25, Z27, Z7); \
	ADDQ $PB, BX; \
	ADDQ $768, DI; \
	DECQ CX; \
	JNZ  PAIRS; \
LAST: \
	TESTQ   $2, flags+64(FP); \
	JZ      REDUCE; \
	VMOVUPS Z0, (DX); \
	VMOVUPS Z1, 64(DX); \
	VMOVUPS Z2, 128(DX); \
	VMOVUPS Z3, 192(DX); \
	VMOVUPS Z4, 256(DX); \
	VMOVUPS Z5, 320(DX); \
	VMOVUPS Z6, 384(DX); \
	VMOVUPS Z7, 448(DX); \
	JMP     NEXT; \
REDUCE: \
	VEXTRACTF64X4 $1, Z0, Y16; \
	VEXTRACTF64X4 $1, Z1, Y17; \
	VEXTRACTF64X4 $1, Z2, Y18; \
	VEXTRACTF64X4 $1, Z3, Y19; \
	VEXTRACTF64X4 $1, Z4, Y20; \
	VEXTRACTF64X4 $1, Z5, Y21; \
	VEXTRACTF64X4 $1, Z6, Y22; \
	VEXTRACTF64X4 $1, Z7, Y23; \
	TESTQ $1, nb+40(FP); \
	JZ    FOLD; \
	ROWLAST(SI, X10, Y10, Z10, Y8, Z8); \
	ROWLAST(R8, X11, Y11, Z11, Y9, Z9); \
	Q8LAST(Y8, Y10, 0, Y24, Y26, Y0); \
	Q8LAST(Y8, Y10, 32, Y25, Y27, Y1); \
	Q8LAST(Y8, Y10, 64, Y24, Y26, Y2); \
	Q8LAST(Y8, Y10, 96, Y25, Y27, Y3); \
	Q8LAST(Y9, Y11, 0, Y24, Y26, Y4); \
	Q8LAST(Y9, Y11, 32, Y25, Y27, Y5); \
	Q8LAST(Y9, Y11, 64, Y24, Y26, Y6); \
	Q8LAST(Y9, Y11, 96, Y25, Y27, Y7); \
FOLD: \
	MOVQ AX, R10; \
	STOREQ8(Y0, Y16, X0, Y4, Y20, X4); \
	ADDQ R13, R10; \
	STOREQ8(Y1, Y17, X1, Y5, Y21, X5); \
	ADDQ R13, R10; \
	STOREQ8(Y2, Y18, X2, Y6, Y22, X6); \
	ADDQ R13, R10; \
	STOREQ8(Y3, Y19, X3, Y7, Y23, X7); \
NEXT: \
	ADDQ $512, DX; \
	ADDQ $8, AX; \
	LEAQ (SI)(R9*2), SI; \
	DECQ R12; \
	JNZ  TILE; \
	VZEROUPPER; \
	RET

// func gemmQ8x2x4VNNI(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, acc *float32, flags int)
//
// For each of tiles pairs of Q8_0 rows (rb bytes apart, one pair after the other from w):
// the two rows' nb blocks (nb > 0; a chunk of longer rows) against the four inputs packed
// by packQ8Inputs4 at xp, and row 2t+k of input j goes to out[j·outStride + 2t + k]: in
// FOLD, R10 walks the inputs. The accumulators start from the 128 floats at acc + 512·t
// bytes with gemmAccLoad (from zero without), and with gemmAccStore go back there,
// unreduced, instead of to out; only a last chunk may hold an odd block. Z30 holds
// q8ScaleIndex, Z31 0x80 in every byte.
TEXT ·gemmQ8x2x4VNNI(SB), NOSPLIT, $0-72
	VMOVDQU64    ·q8ScaleIndex(SB), Z30
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z31
	GEMMQ8TILES(Q8ROWPAIR, Q8ROWLAST, 68, q8tile, q8carried, q8begin, q8pairs, q8last, q8reduce, q8fold, q8next)

// func gemmQ4_0x2x4VNNI(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, acc *float32, flags int, idx *[256]byte)
//
// gemmQ8x2x4VNNI for Q4_0 rows (18 bytes a block), with the legacy row dots' VPERMW table
// for Q4_0 at idx (legacyIdx: the codes' indexes, then the scales'): Z28 the codes'
// indexes, Z29 0x0f in every byte, Z30 the scales' indexes, Z31 120 in every byte; K1 the
// 36 bytes of a pair of blocks, K2 the 18 of one, K3 the words of the 128-bit lanes 1 and 3.
TEXT ·gemmQ4_0x2x4VNNI(SB), NOSPLIT, $0-80
	LEGACYSETUP(0x78787878, 0xfffffffff, 0x3ffff)
	GEMMQ8TILES(Q4ROWPAIR, Q4ROWLAST, 36, q4tile, q4carried, q4begin, q4pairs, q4last, q4reduce, q4fold, q4next)

// func gemmQ5_0x2x4VNNI(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, acc *float32, flags int, idx *[256]byte)
//
// gemmQ4_0x2x4VNNI for Q5_0 rows (22 bytes a block), with the legacy row dots' table for
// Q5_0: Z31 holds 112 in every byte, K1 the 44 bytes of a pair of blocks, K2 the 22 of
// one.
TEXT ·gemmQ5_0x2x4VNNI(SB), NOSPLIT, $0-80
	LEGACYSETUP(0x70707070, 0xfffffffffff, 0x3fffff)
	GEMMQ8TILES(Q5ROWPAIR, Q5ROWLAST, 44, q5tile, q5carried, q5begin, q5pairs, q5last, q5reduce, q5fold, q5next)
