//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"
#include "kquant_amd64.h"

// The k-quant row dots with AVX2 (kquant.go defines their arithmetic; kquant_avx512_amd64.s
// is the AVX-512 VNNI form): four rows at a time against one Q8KInput, a super-block of
// each per iteration, 32 values per 256-bit register. The codes are made bytes, multiplied
// by the input's int8 codes and added in pairs (VPMADDUBSW), the pairs multiplied by the
// scale words and added in fours (VPMADDWD), all exact. Each row leaves its lanes in Y0-Y3
// (I and M added pairwise by VPHADDD, or I − o·C); after the four rows they are summed
// into each super-block's integers and the float step runs on the four rows at once in
// Y14 (the min types in its even lanes, rows 0-3 in lanes 0, 2, 4, 6; the signed types in
// lanes 0-3).

#define K2PREFETCH 2048

// k2ScaleIdx are the VPSHUFB indexes that make, from the 16 bytes
// [sc0..sc3, m0..m3, sc4..sc7, m4..m7] in both 128-bit lanes, the sixteen words of
// sub-block j's scale (k2ScaleIdx+32j, j = 0..7), and the mins doubled, m0 m0 m1 m1 ...
// m7 m7 (k2ScaleIdx+256).
DATA k2ScaleIdx<>+0(SB)/8, $0x8000800080008000
DATA k2ScaleIdx<>+8(SB)/8, $0x8000800080008000
DATA k2ScaleIdx<>+16(SB)/8, $0x8000800080008000
DATA k2ScaleIdx<>+24(SB)/8, $0x8000800080008000
DATA k2ScaleIdx<>+32(SB)/8, $0x8001800180018001
DATA k2ScaleIdx<>+40(SB)/8, $0x8001800180018001
DATA k2ScaleIdx<>+48(SB)/8, $0x8001800180018001
DATA k2ScaleIdx<>+56(SB)/8, $0x8001800180018001
DATA k2ScaleIdx<>+64(SB)/8, $0x8002800280028002
DATA k2ScaleIdx<>+72(SB)/8, $0x8002800280028002
DATA k2ScaleIdx<>+80(SB)/8, $0x8002800280028002
DATA k2ScaleIdx<>+88(SB)/8, $0x8002800280028002
DATA k2ScaleIdx<>+96(SB)/8, $0x8003800380038003
DATA k2ScaleIdx<>+104(SB)/8, $0x8003800380038003
DATA k2ScaleIdx<>+112(SB)/8, $0x8003800380038003
DATA k2ScaleIdx<>+120(SB)/8, $0x8003800380038003
DATA k2ScaleIdx<>+128(SB)/8, $0x8008800880088008
DATA k2ScaleIdx<>+136(SB)/8, $0x8008800880088008
DATA k2ScaleIdx<>+144(SB)/8, $0x8008800880088008
DATA k2ScaleIdx<>+152(SB)/8, $0x8008800880088008
DATA k2ScaleIdx<>+160(SB)/8, $0x8009800980098009
DATA k2ScaleIdx<>+168(SB)/8, $0x8009800980098009
DATA k2ScaleIdx<>+176(SB)/8, $0x8009800980098009
DATA k2ScaleIdx<>+184(SB)/8, $0x8009800980098009
DATA k2ScaleIdx<>+192(SB)/8, $0x800a800a800a800a
DATA k2ScaleIdx<>+200(SB)/8, $0x800a800a800a800a
DATA k2ScaleIdx<>+208(SB)/8, $0x800a800a800a800a
DATA k2ScaleIdx<>+216(SB)/8, $0x800a800a800a800a
DATA k2ScaleIdx<>+224(SB)/8, $0x800b800b800b800b
DATA k2ScaleIdx<>+232(SB)/8, $0x800b800b800b800b
DATA k2ScaleIdx<>+240(SB)/8, $0x800b800b800b800b
DATA k2ScaleIdx<>+248(SB)/8, $0x800b800b800b800b
DATA k2ScaleIdx<>+256(SB)/8, $0x8005800580048004
DATA k2ScaleIdx<>+264(SB)/8, $0x8007800780068006
DATA k2ScaleIdx<>+272(SB)/8, $0x800d800d800c800c
DATA k2ScaleIdx<>+280(SB)/8, $0x800f800f800e800e
GLOBL k2ScaleIdx<>(SB), RODATA|NOPTR, $288

// k2Scale16Idx are the VPSHUFB indexes that take, from eight scale words (one per 16
// values) in both 128-bit lanes, words 2k (lower lane) and 2k+1 (upper lane), each eight
// times: the scale words of 32 values (k2Scale16Idx+32k, k = 0..3).
DATA k2Scale16Idx<>+0(SB)/8, $0x0100010001000100
DATA k2Scale16Idx<>+8(SB)/8, $0x0100010001000100
DATA k2Scale16Idx<>+16(SB)/8, $0x0302030203020302
DATA k2Scale16Idx<>+24(SB)/8, $0x0302030203020302
DATA k2Scale16Idx<>+32(SB)/8, $0x0504050405040504
DATA k2Scale16Idx<>+40(SB)/8, $0x0504050405040504
DATA k2Scale16Idx<>+48(SB)/8, $0x0706070607060706
DATA k2Scale16Idx<>+56(SB)/8, $0x0706070607060706
DATA k2Scale16Idx<>+64(SB)/8, $0x0908090809080908
DATA k2Scale16Idx<>+72(SB)/8, $0x0908090809080908
DATA k2Scale16Idx<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2Scale16Idx<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2Scale16Idx<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2Scale16Idx<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2Scale16Idx<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k2Scale16Idx<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k2Scale16Idx<>(SB), RODATA|NOPTR, $128

DATA k2Mask30<>+0(SB)/8, $0x3030303030303030
DATA k2Mask30<>+8(SB)/8, $0x3030303030303030
DATA k2Mask30<>+16(SB)/8, $0x3030303030303030
DATA k2Mask30<>+24(SB)/8, $0x3030303030303030
GLOBL k2Mask30<>(SB), RODATA|NOPTR, $32

DATA k2Mask03<>+0(SB)/8, $0x0303030303030303
DATA k2Mask03<>+8(SB)/8, $0x0303030303030303
DATA k2Mask03<>+16(SB)/8, $0x0303030303030303
DATA k2Mask03<>+24(SB)/8, $0x0303030303030303
GLOBL k2Mask03<>(SB), RODATA|NOPTR, $32

DATA k2Mask04<>+0(SB)/8, $0x0404040404040404
DATA k2Mask04<>+8(SB)/8, $0x0404040404040404
DATA k2Mask04<>+16(SB)/8, $0x0404040404040404
DATA k2Mask04<>+24(SB)/8, $0x0404040404040404
GLOBL k2Mask04<>(SB), RODATA|NOPTR, $32

DATA k2Words32<>+0(SB)/8, $0x0020002000200020
DATA k2Words32<>+8(SB)/8, $0x0020002000200020
DATA k2Words32<>+16(SB)/8, $0x0020002000200020
DATA k2Words32<>+24(SB)/8, $0x0020002000200020
GLOBL k2Words32<>(SB), RODATA|NOPTR, $32

DATA k2Mask10<>+0(SB)/8, $0x1010101010101010
DATA k2Mask10<>+8(SB)/8, $0x1010101010101010
DATA k2Mask10<>+16(SB)/8, $0x1010101010101010
DATA k2Mask10<>+24(SB)/8, $0x1010101010101010
GLOBL k2Mask10<>(SB), RODATA|NOPTR, $32

// K2SCALEMIN6 is KSCALEMIN6 (kquant_avx512_amd64.h) with the 16 bytes in both lanes of Y13.
#define K2SCALEMIN6(R) \
	KSCALEGPR(R); \
	VMOVQ      AX, X13; \
	VPINSRQ    $1, DX, X13, X13; \
	VPERMQ     $0x44, Y13, Y13

// K2DOT32 multiplies the 32 byte codes in CODES by the input's at XOFF(DI) and by the
// scale words at SIDX(SB) (from Y13), adding the fours to Y8 (FIRST: VMOVDQU, which starts
// them, or VPADDD).
#define K2DOT32(CODES, XOFF, SIDX, FIRST) \
	VPMADDUBSW XOFF(DI), CODES, Y6; \
	VPSHUFB    SIDX(SB), Y13, Y7; \
	VPMADDWD   Y7, Y6, Y6; \
	FIRST(Y6)

#define K2START(P) VMOVDQU P, Y8
#define K2ADD(P) VPADDD P, Y8, Y8

// K2MIN finishes a row of a type with mins: the min lanes from the doubled mins times the
// input's block sums (Y9), added pairwise with I (Y8) into RES.
#define K2MIN(RES) \
	VPSHUFB  k2ScaleIdx<>+256(SB), Y13, Y9; \
	VPMADDWD 256(DI), Y9, Y9; \
	VPHADDD  Y9, Y8, RES

// K2ENDMIN finishes an iteration of a type with mins: the four rows' I and M as
// [I0, M0, I1, M1, I2, M2, I3, M3] (Y4), d and dmin of the four rows (the fp16 pair at
// DOFF of each) times the input's scale (Y5), and in the even lanes of Y14,
// acc += float32(I)·d1 − float32(M)·m1.
#define K2ENDMIN(DOFF) \
	VPHADDD      Y1, Y0, Y4; \
	VPHADDD      Y3, Y2, Y5; \
	VEXTRACTI128 $1, Y4, X6; \
	VPADDD       X6, X4, X4; \
	VEXTRACTI128 $1, Y5, X6; \
	VPADDD       X6, X5, X5; \
	VINSERTI128  $1, X5, Y4, Y4; \
	VMOVD        DOFF(SI)(R13*1), X5; \
	VPINSRD      $1, DOFF(R8)(R13*1), X5, X5; \
	VPINSRD      $2, DOFF(R9)(R13*1), X5, X5; \
	VPINSRD      $3, DOFF(R10)(R13*1), X5, X5; \
	VCVTPH2PS    X5, Y5; \
	VBROADCASTSS 288(DI), Y6; \
	VMULPS       Y6, Y5, Y5; \
	VCVTDQ2PS    Y4, Y4; \
	VMULPS       Y5, Y4, Y4; \
	VMOVSHDUP    Y4, Y5; \
	VSUBPS       Y5, Y4, Y4; \
	VADDPS       Y4, Y14, Y14

// K2ENDSIGNED finishes an iteration of a signed type: the four rows' I − o·C summed as
// [T0, T1, T2, T3] (X4), d of the four rows (the fp16 at DOFF of each) times the input's
// scale (X5), and in X14, acc += float32(T)·d1.
#define K2ENDSIGNED(DOFF) \
	VPHADDD      Y1, Y0, Y4; \
	VPHADDD      Y3, Y2, Y5; \
	VPHADDD      Y5, Y4, Y4; \
	VEXTRACTI128 $1, Y4, X5; \
	VPADDD       X5, X4, X4; \
	VPXOR        X5, X5, X5; \
	VPINSRW      $0, DOFF(SI)(R13*1), X5, X5; \
	VPINSRW      $1, DOFF(R8)(R13*1), X5, X5; \
	VPINSRW      $2, DOFF(R9)(R13*1), X5, X5; \
	VPINSRW      $3, DOFF(R10)(R13*1), X5, X5; \
	VCVTPH2PS    X5, X5; \
	VBROADCASTSS 288(DI), X6; \
	VMULPS       X6, X5, X5; \
	VCVTDQ2PS    X4, X4; \
	VMULPS       X5, X4, X4; \
	VADDPS       X4, X14, X14

// K2NIBS leaves the low nibbles of the 32 bytes at OFF(R)(R13*1) in LO, the high ones in
// HI (Y15 = 0x0f…); K2NIB4 in Y4 and Y5.
#define K2NIBS(R, OFF, LO, HI) \
	VMOVDQU OFF(R)(R13*1), LO; \
	VPSRLW  $4, LO, HI; \
	VPAND   Y15, LO, LO; \
	VPAND   Y15, HI, HI

#define K2NIB4(R, OFF) K2NIBS(R, OFF, Y4, Y5)

// Q4K2CODES multiplies one Q4_K super-block of the row at R: its scales and mins into Y13
// (K2SCALEMIN6), its nibbles (K2NIB4) by DOT, a macro of (CODES, XOFF, SIDX, FIRST):
// K2DOT32 for one input, K2VDOT32 for four; Q4K2CODESIN does it with the nibbles in LO and
// HI (K2V8DOT, eight inputs, keeps Y4 and Y5 for its sums).
#define Q4K2CODESIN(R, DOT, LO, HI) \
	PREFETCHT0 K2PREFETCH(R)(R13*1); \
	PREFETCHT0 K2PREFETCH+64(R)(R13*1); \
	K2SCALEMIN6(R); \
	K2NIBS(R, 16, LO, HI); \
	DOT(LO, 0, k2ScaleIdx<>+0, K2START); \
	DOT(HI, 32, k2ScaleIdx<>+32, K2ADD); \
	K2NIBS(R, 48, LO, HI); \
	DOT(LO, 64, k2ScaleIdx<>+64, K2ADD); \
	DOT(HI, 96, k2ScaleIdx<>+96, K2ADD); \
	K2NIBS(R, 80, LO, HI); \
	DOT(LO, 128, k2ScaleIdx<>+128, K2ADD); \
	DOT(HI, 160, k2ScaleIdx<>+160, K2ADD); \
	K2NIBS(R, 112, LO, HI); \
	DOT(LO, 192, k2ScaleIdx<>+192, K2ADD); \
	DOT(HI, 224, k2ScaleIdx<>+224, K2ADD)

#define Q4K2CODES(R, DOT) Q4K2CODESIN(R, DOT, Y4, Y5)

// Q4K2ROW leaves one Q4_K super-block's lanes of the row at R in RES.
#define Q4K2ROW(R, RES) \
	Q4K2CODES(R, K2DOT32); \
	K2MIN(RES)

// K2HIGHL and K2HIGHR add the fifth bit J of the qh bytes in Y12 (bit J of each byte) to the codes in
// CODES as 16: (qh shifted so that bit J lands on bit 4) & 0x10, or'ed in (T scratch:
// K2HIGHLT, K2HIGHRT; Y9 in K2HIGHL, K2HIGHR).
#define K2HIGHLT(J, CODES, T) \
	VPSLLW $(4-J), Y12, T; \
	VPAND  k2Mask10<>(SB), T, T; \
	VPOR   T, CODES, CODES

#define K2HIGHRT(J, CODES, T) \
	VPSRLW $(J-4), Y12, T; \
	VPAND  k2Mask10<>(SB), T, T; \
	VPOR   T, CODES, CODES

#define K2HIGHL(J, CODES) K2HIGHLT(J, CODES, Y9)
#define K2HIGHR(J, CODES) K2HIGHRT(J, CODES, Y9)

// Q5K2CODES is Q4K2CODES for Q5_K: Q4_K's nibbles (from byte 48 on) plus the fifth bits
// of qh (bytes 16-47, Y12); Q5K2CODESIN with the nibbles in LO and HI, T scratch.
#define Q5K2CODESIN(R, DOT, LO, HI, T) \
	PREFETCHT0 K2PREFETCH(R)(R13*1); \
	PREFETCHT0 K2PREFETCH+64(R)(R13*1); \
	PREFETCHT0 K2PREFETCH+128(R)(R13*1); \
	K2SCALEMIN6(R); \
	VMOVDQU 16(R)(R13*1), Y12; \
	K2NIBS(R, 48, LO, HI); \
	K2HIGHLT(0, LO, T); \
	K2HIGHLT(1, HI, T); \
	DOT(LO, 0, k2ScaleIdx<>+0, K2START); \
	DOT(HI, 32, k2ScaleIdx<>+32, K2ADD); \
	K2NIBS(R, 80, LO, HI); \
	K2HIGHLT(2, LO, T); \
	K2HIGHLT(3, HI, T); \
	DOT(LO, 64, k2ScaleIdx<>+64, K2ADD); \
	DOT(HI, 96, k2ScaleIdx<>+96, K2ADD); \
	K2NIBS(R, 112, LO, HI); \
	VPAND   k2Mask10<>(SB), Y12, T; \
	VPOR    T, LO, LO; \
	K2HIGHRT(5, HI, T); \
	DOT(LO, 128, k2ScaleIdx<>+128, K2ADD); \
	DOT(HI, 160, k2ScaleIdx<>+160, K2ADD); \
	K2NIBS(R, 144, LO, HI); \
	K2HIGHRT(6, LO, T); \
	K2HIGHRT(7, HI, T); \
	DOT(LO, 192, k2ScaleIdx<>+192, K2ADD); \
	DOT(HI, 224, k2ScaleIdx<>+224, K2ADD)

#define Q5K2CODES(R, DOT) Q5K2CODESIN(R, DOT, Y4, Y5, Y9)

// Q5K2ROW leaves one Q5_K super-block's lanes of the row at R in RES.
#define Q5K2ROW(R, RES) \
	Q5K2CODES(R, K2DOT32); \
	K2MIN(RES)

// K2MASKS loads the GPR masks of K2SCALEMIN6 (R14 = 0x3f…, R15 = 0x0f…, R12 = 0x30…) and
// Y15 = 0x0f….
#define K2MASKS \
	MOVQ         $0x3f3f3f3f3f3f3f3f, R14; \
	MOVQ         $0x0f0f0f0f0f0f0f0f, R15; \
	MOVQ         $0x3030303030303030, R12; \
	MOVQ         R15, X15; \
	VPBROADCASTQ X15, Y15

// K2SETUP is KSETUP (kquant_avx512_amd64.s) for the AVX2 kernels: the arguments, the GPR
// masks, Y15 = 0x0f…, and the accumulator Y14 zeroed.
#define K2SETUP \
	MOVQ         w+8(FP), SI; \
	MOVQ         x+16(FP), DI; \
	MOVQ         nb+24(FP), R11; \
	MOVQ         stride+32(FP), AX; \
	LEAQ         (SI)(AX*1), R8; \
	LEAQ         (R8)(AX*1), R9; \
	LEAQ         (R9)(AX*1), R10; \
	K2MASKS; \
	VPXOR        Y14, Y14, Y14; \
	XORQ         R13, R13

// K2FINISHMIN stores the four rows' results of a type with mins, lanes 0, 2, 4 and 6 of
// Y14, at out + k·outStride·4.
#define K2FINISHMIN \
	VEXTRACTF128 $1, Y14, X1; \
	MOVQ         out+0(FP), DX; \
	MOVQ         outStride+40(FP), CX; \
	SHLQ         $2, CX; \
	VMOVSS       X14, (DX); \
	ADDQ         CX, DX; \
	VEXTRACTPS   $2, X14, (DX); \
	ADDQ         CX, DX; \
	VMOVSS       X1, (DX); \
	ADDQ         CX, DX; \
	VEXTRACTPS   $2, X1, (DX); \
	VZEROUPPER

// K2FINISHSIGNED stores the four rows' results of a signed type, lanes 0-3 of X14.
#define K2FINISHSIGNED \
	MOVQ       out+0(FP), DX; \
	MOVQ       outStride+40(FP), CX; \
	SHLQ       $2, CX; \
	VMOVSS     X14, (DX); \
	ADDQ       CX, DX; \
	VEXTRACTPS $1, X14, (DX); \
	ADDQ       CX, DX; \
	VEXTRACTPS $2, X14, (DX); \
	ADDQ       CX, DX; \
	VEXTRACTPS $3, X14, (DX); \
	VZEROUPPER

// The batched Q4_K and Q5_K products with AVX2 (kbatch_amd64.go): one row against four
// input vectors at a time, the row's codes and scale words unpacked once for the four.
// The vectors' Q8_K super-blocks come interleaved eight at a time (Q8KBatch's octs:
// super-block b of vector v of the oct at 320v, 2560 bytes a super-block; a kernel of four
// vectors reads one half of an oct); each vector's integers collect in one
// of Y0-Y3 as the row dots' do, and the float step runs with one vector per pair of lanes,
// K2ENDMIN's arithmetic with the row's d and dmin against the four vectors' scales.

// K2VDOT multiplies the 32 codes in CODES by the four vectors' at XOFF(DI) + 320v and by
// the scale words at SIDX(SB) (from SRC), adding the fours to Y0-Y3 (Y9 and Y10 scratch).
// K2VDOT32 and K2VDOT6 are its forms with K2DOT32's and K2DOT6's arguments (FIRST unused:
// the lanes start at zero, K2VSTART).
#define K2VDOT(CODES, XOFF, SIDX, SRC) \
	VPSHUFB    SIDX(SB), SRC, Y9; \
	VPMADDUBSW XOFF(DI), CODES, Y10; \
	VPMADDWD   Y9, Y10, Y10; \
	VPADDD     Y10, Y0, Y0; \
	VPMADDUBSW XOFF+320(DI), CODES, Y10; \
	VPMADDWD   Y9, Y10, Y10; \
	VPADDD     Y10, Y1, Y1; \
	VPMADDUBSW XOFF+640(DI), CODES, Y10; \
	VPMADDWD   Y9, Y10, Y10; \
	VPADDD     Y10, Y2, Y2; \
	VPMADDUBSW XOFF+960(DI), CODES, Y10; \
	VPMADDWD   Y9, Y10, Y10; \
	VPADDD     Y10, Y3, Y3

#define K2VDOT32(CODES, XOFF, SIDX, FIRST) K2VDOT(CODES, XOFF, SIDX, Y13)
#define K2VDOT6(CODES, XOFF, SIDX, FIRST) K2VDOT(CODES, XOFF, SIDX, Y11)

// K2VMINLANES adds, for each of the four vectors, its min lanes (the min words M times its
// block sums) pairwise with its I lanes, in place in Y0-Y3.
#define K2VMINLANES(M) \
	VPMADDWD 256(DI), M, Y10; \
	VPHADDD  Y10, Y0, Y0; \
	VPMADDWD 576(DI), M, Y10; \
	VPHADDD  Y10, Y1, Y1; \
	VPMADDWD 896(DI), M, Y10; \
	VPHADDD  Y10, Y2, Y2; \
	VPMADDWD 1216(DI), M, Y10; \
	VPHADDD  Y10, Y3, Y3

// K2VMIN is K2MIN for the four vectors (the mins doubled from Y13).
#define K2VMIN \
	VPSHUFB k2ScaleIdx<>+256(SB), Y13, Y9; \
	K2VMINLANES(Y9)

// K2VEND is K2ENDMIN for one row and four vectors: their I and M as [I0, M0, I1, M1, I2,
// M2, I3, M3] (Y4), the row's d and dmin (the fp16 pair at DOFF(SI)(R13*1)) times each
// vector's scale, and in the even lanes of Y14, acc += float32(I)·d1 − float32(M)·m1.
// K2VENDOF is its form for the four vectors' lanes in A0-A3 whose scales are at
// XO+288(DI) + 320v, the sums in ACC, with the scratch registers TA-TE (and their X
// halves XA-XE).
#define K2VENDOF(DOFF, A0, A1, A2, A3, XO, ACC, TA, XA, TB, XB, TC, XC, TD, XD, TE, XE) \
	VPHADDD      A1, A0, TA; \
	VPHADDD      A3, A2, TB; \
	VEXTRACTI128 $1, TA, XC; \
	VPADDD       XC, XA, XA; \
	VEXTRACTI128 $1, TB, XC; \
	VPADDD       XC, XB, XB; \
	VINSERTI128  $1, XB, TA, TA; \
	VPBROADCASTD DOFF(SI)(R13*1), XB; \
	VCVTPH2PS    XB, TB; \
	VBROADCASTSS XO+288(DI), XC; \
	VBROADCASTSS XO+608(DI), XD; \
	VUNPCKLPD    XD, XC, XC; \
	VBROADCASTSS XO+928(DI), XE; \
	VBROADCASTSS XO+1248(DI), XD; \
	VUNPCKLPD    XD, XE, XE; \
	VINSERTF128  $1, XE, TC, TC; \
	VMULPS       TC, TB, TB; \
	VCVTDQ2PS    TA, TA; \
	VMULPS       TB, TA, TA; \
	VMOVSHDUP    TA, TB; \
	VSUBPS       TB, TA, TA; \
	VADDPS       TA, ACC, ACC

#define K2VEND(DOFF) K2VENDOF(DOFF, Y0, Y1, Y2, Y3, 0, Y14, Y4, X4, Y5, X5, Y6, X6, Y7, X7, Y8, X8)

// K2VSTART zeroes the four vectors' integer lanes for a super-block.
#define K2VSTART \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y1, Y1, Y1; \
	VPXOR Y2, Y2, Y2; \
	VPXOR Y3, Y3, Y3

// K2V8DOT is K2VDOT32 for eight vectors (at XOFF(DI) + 320v), their lanes in Y0-Y7
// (Y10 and Y11 scratch); K2V8START zeroes them and K2V8MIN adds their min lanes pairwise.
#define K2V8DOT(CODES, XOFF, SIDX, FIRST) \
	VPSHUFB    SIDX(SB), Y13, Y10; \
	VPMADDUBSW XOFF(DI), CODES, Y11; \
	VPMADDWD   Y10, Y11, Y11; \
	VPADDD     Y11, Y0, Y0; \
	VPMADDUBSW XOFF+320(DI), CODES, Y11; \
	VPMADDWD   Y10, Y11, Y11; \
	VPADDD     Y11, Y1, Y1; \
	VPMADDUBSW XOFF+640(DI), CODES, Y11; \
	VPMADDWD   Y10, Y11, Y11; \
	VPADDD     Y11, Y2, Y2; \
	VPMADDUBSW XOFF+960(DI), CODES, Y11; \
	VPMADDWD   Y10, Y11, Y11; \
	VPADDD     Y11, Y3, Y3; \
	VPMADDUBSW XOFF+1280(DI), CODES, Y11; \
	VPMADDWD   Y10, Y11, Y11; \
	VPADDD     Y11, Y4, Y4; \
	VPMADDUBSW XOFF+1600(DI), CODES, Y11; \
	VPMADDWD   Y10, Y11, Y11; \
	VPADDD     Y11, Y5, Y5; \
	VPMADDUBSW XOFF+1920(DI), CODES, Y11; \
	VPMADDWD   Y10, Y11, Y11; \
	VPADDD     Y11, Y6, Y6; \
	VPMADDUBSW XOFF+2240(DI), CODES, Y11; \
	VPMADDWD   Y10, Y11, Y11; \
	VPADDD     Y11, Y7, Y7

#define K2V8START \
	K2VSTART; \
	VPXOR Y4, Y4, Y4; \
	VPXOR Y5, Y5, Y5; \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7

#define K2V8MIN \
	VPSHUFB  k2ScaleIdx<>+256(SB), Y13, Y10; \
	VPMADDWD 256(DI), Y10, Y11; \
	VPHADDD  Y11, Y0, Y0; \
	VPMADDWD 576(DI), Y10, Y11; \
	VPHADDD  Y11, Y1, Y1; \
	VPMADDWD 896(DI), Y10, Y11; \
	VPHADDD  Y11, Y2, Y2; \
	VPMADDWD 1216(DI), Y10, Y11; \
	VPHADDD  Y11, Y3, Y3; \
	VPMADDWD 1536(DI), Y10, Y11; \
	VPHADDD  Y11, Y4, Y4; \
	VPMADDWD 1856(DI), Y10, Y11; \
	VPHADDD  Y11, Y5, Y5; \
	VPMADDWD 2176(DI), Y10, Y11; \
	VPHADDD  Y11, Y6, Y6; \
	VPMADDWD 2496(DI), Y10, Y11; \
	VPHADDD  Y11, Y7, Y7

// Q4K2VROW and Q5K2VROW add one super-block of the row at SI to the four vectors' lanes.
#define Q4K2VROW \
	K2VSTART; \
	Q4K2CODES(SI, K2VDOT32); \
	K2VMIN

#define Q5K2VROW \
	K2VSTART; \
	Q5K2CODES(SI, K2VDOT32); \
	K2VMIN

// K2VSETUP loads the arguments of a batched kernel (the first row at SI, the out pointer
// R8, the output stride in bytes R9, the rows left R10) and the GPR masks and Y15.
#define K2VSETUP \
	MOVQ         out+0(FP), R8; \
	MOVQ         w+8(FP), SI; \
	MOVQ         tiles+40(FP), R10; \
	MOVQ         outStride+48(FP), R9; \
	SHLQ         $2, R9; \
	K2MASKS

// K2VROWSTART starts a row: the vectors from their first super-block, the accumulator Y14
// zeroed.
#define K2VROWSTART \
	MOVQ  xq+16(FP), DI; \
	MOVQ  nb+24(FP), R11; \
	XORQ  R13, R13; \
	VPXOR Y14, Y14, Y14

// K2VSTORE4 stores lanes 0, 2, 4 and 6 of ACC (low half XACC) at DX + v·R9, v = 0..3,
// and leaves DX four outputs on (X1 scratch).
#define K2VSTORE4(ACC, XACC) \
	VEXTRACTF128 $1, ACC, X1; \
	VMOVSS       XACC, (DX); \
	ADDQ         R9, DX; \
	VEXTRACTPS   $2, XACC, (DX); \
	ADDQ         R9, DX; \
	VMOVSS       X1, (DX); \
	ADDQ         R9, DX; \
	VEXTRACTPS   $2, X1, (DX); \
	ADDQ         R9, DX

// K2VROWEND stores the row's four results (lanes 0, 2, 4, 6 of Y14) at R8 + v·R9 and
// moves to the next row; loops to L while there is one. K2V8ROWEND stores eight, the
// last four from Y12.
#define K2VROWEND(L) \
	MOVQ         R8, DX; \
	K2VSTORE4(Y14, X14); \
	ADDQ         $4, R8; \
	ADDQ         rb+32(FP), SI; \
	DECQ         R10; \
	JNZ          L

#define K2V8ROWEND(L) \
	MOVQ R8, DX; \
	K2VSTORE4(Y14, X14); \
	K2VSTORE4(Y12, X12); \
	ADDQ $4, R8; \
	ADDQ rb+32(FP), SI; \
	DECQ R10; \
	JNZ  L

// K2VOFFSET takes o·C (the scale words in Y12 times a vector's block sums at XOFF(DI),
// shifted by SHIFT = log2 o) from the vector's lanes ACC.
#define K2VOFFSET(XOFF, ACC, SHIFT) \
	VPMADDWD XOFF(DI), Y12, Y9; \
	VPSLLD   $SHIFT, Y9, Y9; \
	VPSUBD   Y9, ACC, ACC

// K2VOFFSETS is K2VOFFSET for the four vectors.
#define K2VOFFSETS(SHIFT) \
	K2VOFFSET(256, Y0, SHIFT); \
	K2VOFFSET(576, Y1, SHIFT); \
	K2VOFFSET(896, Y2, SHIFT); \
	K2VOFFSET(1216, Y3, SHIFT)

// Q6K2VROW adds one Q6_K super-block of the row at SI to the four vectors' lanes, I − 32·C.
#define Q6K2VROW \
	K2VSTART; \
	Q6K2CODES(SI, K2VDOT6); \
	K2VOFFSETS(5)

// K2VENDSIGNED is K2ENDSIGNED for one row and four vectors: their I − o·C summed as [T0,
// T1, T2, T3] (X4), the row's d (the fp16 at DOFF(SI)(R13*1)) times each vector's scale,
// and in X14, acc += float32(T)·d1.
#define K2VENDSIGNED(DOFF) \
	VPHADDD      Y1, Y0, Y4; \
	VPHADDD      Y3, Y2, Y5; \
	VPHADDD      Y5, Y4, Y4; \
	VEXTRACTI128 $1, Y4, X5; \
	VPADDD       X5, X4, X4; \
	VPBROADCASTW DOFF(SI)(R13*1), X5; \
	VCVTPH2PS    X5, X5; \
	VMOVSS       288(DI), X6; \
	VINSERTPS    $0x10, 608(DI), X6, X6; \
	VINSERTPS    $0x20, 928(DI), X6, X6; \
	VINSERTPS    $0x30, 1248(DI), X6, X6; \
	VMULPS       X6, X5, X5; \
	VCVTDQ2PS    X4, X4; \
	VMULPS       X5, X4, X4; \
	VADDPS       X4, X14, X14

// K2VROWENDSIGNED is K2VROWEND for the signed types (the results in lanes 0-3 of X14).
#define K2VROWENDSIGNED(L) \
	MOVQ       R8, DX; \
	VMOVSS     X14, (DX); \
	ADDQ       R9, DX; \
	VEXTRACTPS $1, X14, (DX); \
	ADDQ       R9, DX; \
	VEXTRACTPS $2, X14, (DX); \
	ADDQ       R9, DX; \
	VEXTRACTPS $3, X14, (DX); \
	ADDQ       $4, R8; \
	ADDQ       rb+32(FP), SI; \
	DECQ       R10; \
	JNZ        L

// Q2K2VROW adds one Q2_K super-block of the row at SI to the four vectors' lanes (the min
// words in Y13); Q3K2VROW one Q3_K super-block, I − 4·C.
#define Q2K2VROW \
	K2VSTART; \
	Q2K2CODES(SI, K2VDOT6); \
	K2VMINLANES(Y13)

#define Q3K2VROW \
	K2VSTART; \
	Q3K2CODES(SI, K2VDOT6); \
	K2VOFFSETS(2)

// func dotQ4_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ4_Kx4AVX2(SB), NOSPLIT, $0-48
	K2SETUP

q4k2loop:
	Q4K2ROW(SI, Y0)
	Q4K2ROW(R8, Y1)
	Q4K2ROW(R9, Y2)
	Q4K2ROW(R10, Y3)
	K2ENDMIN(0)
	ADDQ $144, R13
	ADDQ $320, DI
	DECQ R11
	JNZ  q4k2loop
	K2FINISHMIN
	RET

// func dotQ5_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ5_Kx4AVX2(SB), NOSPLIT, $0-48
	K2SETUP

q5k2loop:
	Q5K2ROW(SI, Y0)
	Q5K2ROW(R8, Y1)
	Q5K2ROW(R9, Y2)
	Q5K2ROW(R10, Y3)
	K2ENDMIN(0)
	ADDQ $176, R13
	ADDQ $320, DI
	DECQ R11
	JNZ  q5k2loop
	K2FINISHMIN
	RET

// Q6K2QCODES makes the 32 codes of a quarter of a Q6_K half in Y7: the nibbles in NIB and,
// above them, the quarter's two bits of the qh bytes in Y6, moved to bits 4-5 by SHIFT
// (VPSLLW or VPSRLW) by AMT.
#define Q6K2QCODES(NIB, SHIFT, AMT) \
	SHIFT      $AMT, Y6, Y7; \
	VPAND      k2Mask30<>(SB), Y7, Y7; \
	VPOR       NIB, Y7, Y7

// Q6K2HALF multiplies the 128 codes of half H of the Q6_K super-block at R by DOT (FIRST:
// K2START or K2ADD), the quarters in the order 0, 2, 1, 3 of ql's nibbles; Y11 holds the
// half's eight scale words in both lanes.
#define Q6K2HALF(R, H, FIRST, DOT) \
	VMOVDQU    (128+32*H)(R)(R13*1), Y6; \
	VMOVDQU    (64*H)(R)(R13*1), Y4; \
	VPAND      Y15, Y4, Y5; \
	Q6K2QCODES(Y5, VPSLLW, 4); \
	DOT(Y7, 128*H, k2Scale16Idx<>+0, FIRST); \
	VPSRLW     $4, Y4, Y4; \
	VPAND      Y15, Y4, Y4; \
	Q6K2QCODES(Y4, VPSRLW, 0); \
	DOT(Y7, 128*H+64, k2Scale16Idx<>+64, K2ADD); \
	VMOVDQU    (64*H+32)(R)(R13*1), Y4; \
	VPAND      Y15, Y4, Y5; \
	Q6K2QCODES(Y5, VPSLLW, 2); \
	DOT(Y7, 128*H+32, k2Scale16Idx<>+32, K2ADD); \
	VPSRLW     $4, Y4, Y4; \
	VPAND      Y15, Y4, Y4; \
	Q6K2QCODES(Y4, VPSRLW, 2); \
	DOT(Y7, 128*H+96, k2Scale16Idx<>+96, K2ADD)

// K2DOT6 is K2DOT32 with the scale words from Y11 (Q6_K's sixteen-value sub-blocks).
#define K2DOT6(CODES, XOFF, SIDX, FIRST) \
	VPMADDUBSW XOFF(DI), CODES, Y10; \
	VPSHUFB    SIDX(SB), Y11, Y9; \
	VPMADDWD   Y9, Y10, Y10; \
	FIRST(Y10)

// Q6K2CODES multiplies one Q6_K super-block of the row at R by DOT: the int8 scales
// widened to words (Y12), each half's eight in both lanes of Y11, the codes' products.
#define Q6K2CODES(R, DOT) \
	PREFETCHT0 K2PREFETCH(R)(R13*1); \
	PREFETCHT0 K2PREFETCH+64(R)(R13*1); \
	PREFETCHT0 K2PREFETCH+128(R)(R13*1); \
	VPMOVSXBW  192(R)(R13*1), Y12; \
	VPERMQ     $0x44, Y12, Y11; \
	Q6K2HALF(R, 0, K2START, DOT); \
	VPERMQ     $0xee, Y12, Y11; \
	Q6K2HALF(R, 1, K2ADD, DOT)

// Q6K2ROW leaves one Q6_K super-block's lanes of the row at R, I − 32·C, in RES
// (C = Σ sc·bsum from the block sums).
#define Q6K2ROW(R, RES) \
	Q6K2CODES(R, K2DOT6); \
	VPMADDWD     256(DI), Y12, Y9; \
	VPSLLD       $5, Y9, Y9; \
	VPSUBD       Y9, Y8, RES

// func dotQ6_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ6_Kx4AVX2(SB), NOSPLIT, $0-48
	K2SETUP

q6k2loop:
	Q6K2ROW(SI, Y0)
	Q6K2ROW(R8, Y1)
	Q6K2ROW(R9, Y2)
	Q6K2ROW(R10, Y3)
	K2ENDSIGNED(208)
	ADDQ $210, R13
	ADDQ $320, DI
	DECQ R11
	JNZ  q6k2loop
	K2FINISHSIGNED
	RET

// Q2K2QUARTER multiplies quarter K of half H of a Q2_K or Q3_K super-block by DOT: the
// 2-bit codes of the qs bytes in Y6 shifted by 2K and masked, with HIGH (Q3_K's third bits)
// or'ed in, times the scale words of the half (Y11).
#define Q2K2QUARTER(H, K, FIRST, HIGH, DOT) \
	VPSRLW $(2*K), Y6, Y7; \
	VPAND  k2Mask03<>(SB), Y7, Y7; \
	HIGH; \
	DOT(Y7, 128*H+32*K, k2Scale16Idx<>+32*K, FIRST)

#define K2NOHIGH

// Q3K2HIGHL and Q3K2HIGHR or the third bit J of the hmask bytes in Y4 (bit J of each
// byte) into the codes in Y7 as 4.
#define Q3K2HIGHL(J) \
	VPSLLW $(2-J), Y4, Y9; \
	VPAND  k2Mask04<>(SB), Y9, Y9; \
	VPOR   Y9, Y7, Y7

#define Q3K2HIGHR(J) \
	VPSRLW $(J-2), Y4, Y9; \
	VPAND  k2Mask04<>(SB), Y9, Y9; \
	VPOR   Y9, Y7, Y7

// Q2K2CODES multiplies one Q2_K super-block of the row at R by DOT: the scale and min
// nibbles as words (Y12, Y13), the codes' products.
#define Q2K2CODES(R, DOT) \
	PREFETCHT0   K2PREFETCH(R)(R13*1); \
	PREFETCHT0   K2PREFETCH+64(R)(R13*1); \
	VPMOVZXBW    (R)(R13*1), Y12; \
	VPSRLW       $4, Y12, Y13; \
	VPAND        Y15, Y12, Y12; \
	VPERMQ       $0x44, Y12, Y11; \
	VMOVDQU      16(R)(R13*1), Y6; \
	Q2K2QUARTER(0, 0, K2START, K2NOHIGH, DOT); \
	Q2K2QUARTER(0, 1, K2ADD, K2NOHIGH, DOT); \
	Q2K2QUARTER(0, 2, K2ADD, K2NOHIGH, DOT); \
	Q2K2QUARTER(0, 3, K2ADD, K2NOHIGH, DOT); \
	VPERMQ       $0xee, Y12, Y11; \
	VMOVDQU      48(R)(R13*1), Y6; \
	Q2K2QUARTER(1, 0, K2ADD, K2NOHIGH, DOT); \
	Q2K2QUARTER(1, 1, K2ADD, K2NOHIGH, DOT); \
	Q2K2QUARTER(1, 2, K2ADD, K2NOHIGH, DOT); \
	Q2K2QUARTER(1, 3, K2ADD, K2NOHIGH, DOT)

// Q2K2ROW leaves one Q2_K super-block's lanes of the row at R in RES: the codes' products
// (Y8) and the min lanes from the block sums, added pairwise.
#define Q2K2ROW(R, RES) \
	Q2K2CODES(R, K2DOT6); \
	VPMADDWD     256(DI), Y13, Y9; \
	VPHADDD      Y9, Y8, RES

// Q3K2CODES multiplies one Q3_K super-block of the row at R by DOT: the signed scales
// (Q3SCALEGPR, R12 = 0x03…) as words in Y12, the codes (hmask in Y4).
#define Q3K2CODES(R, DOT) \
	PREFETCHT0   K2PREFETCH(R)(R13*1); \
	PREFETCHT0   K2PREFETCH+64(R)(R13*1); \
	Q3SCALEGPR(R); \
	VMOVQ        AX, X12; \
	VPINSRQ      $1, BX, X12, X12; \
	VPMOVZXBW    X12, Y12; \
	VPSUBW       k2Words32<>(SB), Y12, Y12; \
	VMOVDQU      (R)(R13*1), Y4; \
	VPERMQ       $0x44, Y12, Y11; \
	VMOVDQU      32(R)(R13*1), Y6; \
	Q2K2QUARTER(0, 0, K2START, Q3K2HIGHL(0), DOT); \
	Q2K2QUARTER(0, 1, K2ADD, Q3K2HIGHL(1), DOT); \
	Q2K2QUARTER(0, 2, K2ADD, Q3K2HIGHL(2), DOT); \
	Q2K2QUARTER(0, 3, K2ADD, Q3K2HIGHR(3), DOT); \
	VPERMQ       $0xee, Y12, Y11; \
	VMOVDQU      64(R)(R13*1), Y6; \
	Q2K2QUARTER(1, 0, K2ADD, Q3K2HIGHR(4), DOT); \
	Q2K2QUARTER(1, 1, K2ADD, Q3K2HIGHR(5), DOT); \
	Q2K2QUARTER(1, 2, K2ADD, Q3K2HIGHR(6), DOT); \
	Q2K2QUARTER(1, 3, K2ADD, Q3K2HIGHR(7), DOT)

// Q3K2ROW leaves one Q3_K super-block's lanes of the row at R, I − 4·C, in RES
// (C = Σ sc·bsum from the block sums).
#define Q3K2ROW(R, RES) \
	Q3K2CODES(R, K2DOT6); \
	VPMADDWD     256(DI), Y12, Y9; \
	VPSLLD       $2, Y9, Y9; \
	VPSUBD       Y9, Y8, RES

// func dotQ2_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ2_Kx4AVX2(SB), NOSPLIT, $0-48
	K2SETUP

q2k2loop:
	Q2K2ROW(SI, Y0)
	Q2K2ROW(R8, Y1)
	Q2K2ROW(R9, Y2)
	Q2K2ROW(R10, Y3)
	K2ENDMIN(80)
	ADDQ $84, R13
	ADDQ $320, DI
	DECQ R11
	JNZ  q2k2loop
	K2FINISHMIN
	RET

// func dotQ3_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ3_Kx4AVX2(SB), NOSPLIT, $0-48
	K2SETUP
	MOVQ $0x0303030303030303, R12

q3k2loop:
	Q3K2ROW(SI, Y0)
	Q3K2ROW(R8, Y1)
	Q3K2ROW(R9, Y2)
	Q3K2ROW(R10, Y3)
	K2ENDSIGNED(108)
	ADDQ $110, R13
	ADDQ $320, DI
	DECQ R11
	JNZ  q3k2loop
	K2FINISHSIGNED
	RET

// func dotQ4_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)
//
// For each of tiles Q4_K rows (rb bytes apart from w, nb super-blocks each): the row
// against the four vectors at xq, its result for vector v at out + 4·(v·outStride + t).
TEXT ·dotQ4_KV4AVX2(SB), NOSPLIT, $0-56
	K2VSETUP

q4kvrow:
	K2VROWSTART

q4kvloop:
	Q4K2VROW
	K2VEND(0)
	ADDQ $144, R13
	ADDQ $2560, DI
	DECQ R11
	JNZ  q4kvloop
	K2VROWEND(q4kvrow)
	VZEROUPPER
	RET

// func dotQ4_KV8AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)
//
// dotQ4_KV4AVX2 for eight vectors (the two quads of an oct of Q8KBatch's layout): the
// row's codes and scale words unpacked once for eight, the nibbles in Y8 and Y9, the
// vectors' lanes in Y0-Y7, the float sums of vectors 0-3 in Y14 and of 4-7 in Y12.
TEXT ·dotQ4_KV8AVX2(SB), NOSPLIT, $0-56
	K2VSETUP

q4kv8row:
	K2VROWSTART
	VPXOR Y12, Y12, Y12

q4kv8loop:
	K2V8START
	Q4K2CODESIN(SI, K2V8DOT, Y8, Y9)
	K2V8MIN
	K2VENDOF(0, Y0, Y1, Y2, Y3, 0, Y14, Y8, X8, Y9, X9, Y10, X10, Y11, X11, Y13, X13)
	K2VENDOF(0, Y4, Y5, Y6, Y7, 1280, Y12, Y0, X0, Y1, X1, Y2, X2, Y3, X3, Y8, X8)
	ADDQ $144, R13
	ADDQ $2560, DI
	DECQ R11
	JNZ  q4kv8loop
	K2V8ROWEND(q4kv8row)
	VZEROUPPER
	RET

// func dotQ5_KV8AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)
//
// dotQ4_KV8AVX2 for Q5_K rows: the fifth bits take Y12 while the codes are made, so the
// float sums of vectors 4-7 wait in the frame (acc) between super-blocks.
TEXT ·dotQ5_KV8AVX2(SB), NOSPLIT, $32-56
	K2VSETUP

q5kv8row:
	K2VROWSTART
	VPXOR   Y12, Y12, Y12
	VMOVUPS Y12, acc-32(SP)

q5kv8loop:
	K2V8START
	Q5K2CODESIN(SI, K2V8DOT, Y8, Y9, Y10)
	K2V8MIN
	K2VENDOF(0, Y0, Y1, Y2, Y3, 0, Y14, Y8, X8, Y9, X9, Y10, X10, Y11, X11, Y13, X13)
	VMOVUPS acc-32(SP), Y12
	K2VENDOF(0, Y4, Y5, Y6, Y7, 1280, Y12, Y0, X0, Y1, X1, Y2, X2, Y3, X3, Y8, X8)
	VMOVUPS Y12, acc-32(SP)
	ADDQ $176, R13
	ADDQ $2560, DI
	DECQ R11
	JNZ  q5kv8loop
	VMOVUPS acc-32(SP), Y12
	K2V8ROWEND(q5kv8row)
	VZEROUPPER
	RET

// func dotQ5_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)
TEXT ·dotQ5_KV4AVX2(SB), NOSPLIT, $0-56
	K2VSETUP

q5kvrow:
	K2VROWSTART

q5kvloop:
	Q5K2VROW
	K2VEND(0)
	ADDQ $176, R13
	ADDQ $2560, DI
	DECQ R11
	JNZ  q5kvloop
	K2VROWEND(q5kvrow)
	VZEROUPPER
	RET

// func dotQ6_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)
TEXT ·dotQ6_KV4AVX2(SB), NOSPLIT, $0-56
	K2VSETUP

q6kvrow:
	K2VROWSTART

q6kvloop:
	Q6K2VROW
	K2VENDSIGNED(208)
	ADDQ $210, R13
	ADDQ $2560, DI
	DECQ R11
	JNZ  q6kvloop
	K2VROWENDSIGNED(q6kvrow)
	VZEROUPPER
	RET

// func dotQ2_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)
TEXT ·dotQ2_KV4AVX2(SB), NOSPLIT, $0-56
	K2VSETUP

q2kvrow:
	K2VROWSTART

q2kvloop:
	Q2K2VROW
	K2VEND(80)
	ADDQ $84, R13
	ADDQ $2560, DI
	DECQ R11
	JNZ  q2kvloop
	K2VROWEND(q2kvrow)
	VZEROUPPER
	RET

// func dotQ3_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)
TEXT ·dotQ3_KV4AVX2(SB), NOSPLIT, $0-56
	K2VSETUP
	MOVQ $0x0303030303030303, R12

q3kvrow:
	K2VROWSTART

q3kvloop:
	Q3K2VROW
	K2VENDSIGNED(108)
	ADDQ $110, R13
	ADDQ $2560, DI
	DECQ R11
	JNZ  q3kvloop
	K2VROWENDSIGNED(q3kvrow)
	VZEROUPPER
	RET
