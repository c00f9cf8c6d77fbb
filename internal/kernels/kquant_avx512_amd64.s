//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"
#include "kquant_avx512_amd64.h"

// The k-quant row dots with AVX-512 VNNI (kquant.go defines their arithmetic): four rows at
// a time against one Q8KInput, a super-block of each per iteration. The codes of 64 values
// are made bytes, multiplied by the input's int8 codes and added in pairs (VPMADDUBSW), and
// the pairs are multiplied by the sub-block scales and added into the lanes of the row's
// integer register (VPDPWSSD, or VPMADDWD for the first), all exact; Q4_K does it in
// 256-bit registers (Q4KROW2). After the four rows,
// each row's lanes are summed into the super-block's integers I and M (the mins times the
// block sums) or I − o·C (the signed types), the four rows together (for the min types by
// a tree of interleaves, KIM8, which one Zen 4 thread ran at 23.5 GB/s of Q4_K with a sum
// per row, 27–28 with the tree and the 256-bit Q4KROW2), and the float step of
// the definition runs on the four rows at once: the min types in the even lanes of Y0
// (rows 0-3 in lanes 0, 2, 4, 6), the signed types in X0 (rows 0-3 in lanes 0-3).

#define KPREFETCH 2048

// KDOT64 multiplies the 64 byte codes in Z9 by the input's at XOFF(DI) and adds the pairs
// times the scale words SC to the lanes in IREG (FIRST: VPMADDWD, which starts them).
#define KDOT64(XOFF, SC, FIRST, IREG) \
	VPMADDUBSW XOFF(DI), Z9, Z10; \
	FIRST      SC, Z10, IREG

// Q4KSUB2 adds the products of the 64 codes of a Q4_K super-block's 32 bytes at OFF(R)
// (sub-block J in the low nibbles, J+1 in the high) by the input's codes, the pairs
// (VPMADDUBSW) times the sub-blocks' scale words (dwords SELA and SELB of SC, two equal
// words each, spread by VPSHUFD), to the eight lanes of IREG and IREG2 (two chains;
// FIRST is VPMADDWD, which starts them, or VPDPWSSD). Y31 =
// 0x0f…; Y9, Y10 and Y15 are scratch.
#define Q4KSUB2(R, OFF, J, SC, SELA, SELB, FIRST, IREG, IREG2) \
	VMOVDQU    OFF(R)(R13*1), Y9; \
	VPSRLW     $4, Y9, Y10; \
	VPANDD     Y31, Y9, Y9; \
	VPANDD     Y31, Y10, Y10; \
	VPMADDUBSW (32*J)(DI), Y9, Y9; \
	VPSHUFD    $SELA, SC, Y15; \
	FIRST      Y15, Y9, IREG; \
	VPMADDUBSW (32*J+32)(DI), Y10, Y10; \
	VPSHUFD    $SELB, SC, Y15; \
	FIRST      Y15, Y10, IREG2

// Q4KSCALES unpacks the scales and mins of the Q4_K super-block of the row at R (and
// prefetches the row): the scales and mins as words (Y1: [sc0..sc3, m0..m3 | sc4..sc7,
// m4..m7]) give, interleaved with themselves, the eight scales as dwords of two equal
// words (Y9: [s0..s3 | s4..s7]), whose 128-bit lanes are repeated in A ([s0..s3 |
// s0..s3]) and B ([s4..s7 | s4..s7]) for Q4KSUB2's VPSHUFD, and the doubled mins m0 m0 …
// m7 m7 times the input's block sums in MREG.
#define Q4KSCALES(R, A, B, MREG) \
	PREFETCHT0 KPREFETCH(R)(R13*1); \
	PREFETCHT0 KPREFETCH+64(R)(R13*1); \
	KSCALEGPR(R); \
	VMOVQ      AX, X1; \
	VPINSRQ    $1, DX, X1, X1; \
	VPMOVZXBW  X1, Y1; \
	VPUNPCKLWD Y1, Y1, Y9; \
	VPERMQ     $0x44, Y9, A; \
	VPERMQ     $0xee, Y9, B; \
	VPUNPCKHWD Y1, Y1, MREG; \
	VPMADDWD   256(DI), MREG, MREG

// Q4KROW2 leaves the integer lanes of one Q4_K super-block of the rows at RA and RB (their
// scales spread by Q4KSCALES in Y2, Y3 and Y4, Y5) in IA and IB, each from two chains (IA2,
// IB2 the second), the two rows' sub-blocks in turn so that the out-of-order window holds
// both rows' independent work. Everything is 256 bits wide: on Zen 4 a 512-bit
// instruction takes two of the vector unit's slots, and the 512-bit form of this loop (the
// codes shifted by kShift04, the scales spread by VPSHUFB, sixteen lanes to sum) issued
// more slots a super-block. One Zen 4 thread, GB/s of Q4_K weights: 23.0–23.6 in 512 bits
// with a sum per row; 24.4–26.2 in 256 bits, one row at a time, with KIM8; 26.8–28.1 two
// rows interleaved (25.8–26.5 beside it). Where 512-bit instructions are full width (Zen
// 5) the 512-bit form is the faster (Q4KROW512, dotQ4_Kx4ZAVX512: one Zen 5 thread, 33.1 →
// 40.9 GB/s from L2, 28.2 → 31.5 from memory).
#define Q4KROW2(RA, RB, IA, IA2, IB, IB2) \
	Q4KSUB2(RA, 16, 0, Y2, 0x00, 0x55, VPMADDWD, IA, IA2); \
	Q4KSUB2(RB, 16, 0, Y4, 0x00, 0x55, VPMADDWD, IB, IB2); \
	Q4KSUB2(RA, 48, 2, Y2, 0xaa, 0xff, VPDPWSSD, IA, IA2); \
	Q4KSUB2(RB, 48, 2, Y4, 0xaa, 0xff, VPDPWSSD, IB, IB2); \
	Q4KSUB2(RA, 80, 4, Y3, 0x00, 0x55, VPDPWSSD, IA, IA2); \
	Q4KSUB2(RB, 80, 4, Y5, 0x00, 0x55, VPDPWSSD, IB, IB2); \
	Q4KSUB2(RA, 112, 6, Y3, 0xaa, 0xff, VPDPWSSD, IA, IA2); \
	Q4KSUB2(RB, 112, 6, Y5, 0xaa, 0xff, VPDPWSSD, IB, IB2); \
	VPADDD     IA2, IA, IA; \
	VPADDD     IB2, IB, IB

// KIM16 is KIM8 for the 16 lanes of I in Z16-Z19: each row's upper eight lanes added to
// its lower eight first.
#define KIM16 \
	VEXTRACTI64X4 $1, Z16, Y2; \
	VPADDD        Y2, Y16, Y16; \
	VEXTRACTI64X4 $1, Z17, Y2; \
	VPADDD        Y2, Y17, Y17; \
	VEXTRACTI64X4 $1, Z18, Y2; \
	VPADDD        Y2, Y18, Y18; \
	VEXTRACTI64X4 $1, Z19, Y2; \
	VPADDD        Y2, Y19, Y19; \
	KIM8

// KIMROW pairs row r's eight lanes of I (IY) and M (MY) into S: [I, M] partial sums in
// each quadword (the lanes' dwords interleaved, then the two halves of each 128-bit lane
// added). Y3 is scratch.
#define KIMROW(IY, MY, S) \
	VPUNPCKLDQ MY, IY, S; \
	VPUNPCKHDQ MY, IY, Y3; \
	VPADDD     Y3, S, S

// KIM8 is KIM16 for eight lanes of I (Y16-Y19), by a tree of interleaves and additions:
// rows' [I, M] quadwords (KIMROW), then rows 0 and 1 and rows 2 and 3 side by side in
// each 128-bit lane, then the two lanes added. Integer sums in another order: the same
// I and M. Y4-Y7 and Y3 are scratch.
#define KIM8 \
	KIMROW(Y16, Y20, Y4); \
	KIMROW(Y17, Y21, Y5); \
	KIMROW(Y18, Y22, Y6); \
	KIMROW(Y19, Y23, Y7); \
	VPUNPCKLQDQ Y5, Y4, Y2; \
	VPUNPCKHQDQ Y5, Y4, Y3; \
	VPADDD      Y3, Y2, Y2; \
	VPUNPCKLQDQ Y7, Y6, Y4; \
	VPUNPCKHQDQ Y7, Y6, Y3; \
	VPADDD      Y3, Y4, Y4; \
	VPERM2I128  $0x20, Y4, Y2, Y3; \
	VPERM2I128  $0x31, Y4, Y2, Y2; \
	VPADDD      Y3, Y2, Y2

// KENDMIN finishes an iteration of a type with mins from the four rows' I and M as
// [I0, M0, I1, M1, I2, M2, I3, M3] (Y2, KIM16 or KIM8): d and dmin of the four rows (the
// fp16 pair at DOFF of each) times the input's scale as [d1_0, m1_0, ...] (Y3), and in the
// even lanes of Y0, acc += float32(I)·d1 − float32(M)·m1.
#define KENDMIN(DOFF) \
	VMOVD         DOFF(SI)(R13*1), X3; \
	VPINSRD       $1, DOFF(R8)(R13*1), X3, X3; \
	VPINSRD       $2, DOFF(R9)(R13*1), X3, X3; \
	VPINSRD       $3, DOFF(R10)(R13*1), X3, X3; \
	VCVTPH2PS     X3, Y3; \
	VBROADCASTSS  288(DI), Y8; \
	VMULPS        Y8, Y3, Y3; \
	VCVTDQ2PS     Y2, Y2; \
	VMULPS        Y3, Y2, Y2; \
	VMOVSHDUP     Y2, Y3; \
	VSUBPS        Y3, Y2, Y2; \
	VADDPS        Y2, Y0, Y0

// KROWSIGNED sums row r's lanes for a signed type: I (16 lanes) less C (8 lanes) shifted
// left by OSHIFT (times the offset o), into the four lanes of IX.
#define KROWSIGNED(I, IY, IX, CY, OSHIFT) \
	VEXTRACTI64X4 $1, I, Y2; \
	VPADDD        Y2, IY, IY; \
	VPSLLD        $OSHIFT, CY, CY; \
	VPSUBD        CY, IY, IY; \
	VEXTRACTI32X4 $1, IY, X2; \
	VPADDD        X2, IX, IX

// KENDSIGNED finishes an iteration of a signed type: the four rows' I − o·C as
// [T0, T1, T2, T3] (X8), d of the four rows (the fp16 at DOFF of each) times the input's
// scale (X3), and in X0, acc += float32(T)·d1.
#define KENDSIGNED(DOFF, OSHIFT) \
	KROWSIGNED(Z16, Y16, X16, Y20, OSHIFT); \
	KROWSIGNED(Z17, Y17, X17, Y21, OSHIFT); \
	KROWSIGNED(Z18, Y18, X18, Y22, OSHIFT); \
	KROWSIGNED(Z19, Y19, X19, Y23, OSHIFT); \
	VPUNPCKLDQ    X17, X16, X2; \
	VPUNPCKHDQ    X17, X16, X3; \
	VPADDD        X3, X2, X2; \
	VPUNPCKLDQ    X19, X18, X3; \
	VPUNPCKHDQ    X19, X18, X8; \
	VPADDD        X8, X3, X3; \
	VPUNPCKLQDQ   X3, X2, X8; \
	VPUNPCKHQDQ   X3, X2, X2; \
	VPADDD        X2, X8, X8; \
	VPXORD        X3, X3, X3; \
	VPINSRW       $0, DOFF(SI)(R13*1), X3, X3; \
	VPINSRW       $1, DOFF(R8)(R13*1), X3, X3; \
	VPINSRW       $2, DOFF(R9)(R13*1), X3, X3; \
	VPINSRW       $3, DOFF(R10)(R13*1), X3, X3; \
	VCVTPH2PS     X3, X3; \
	VBROADCASTSS  288(DI), X2; \
	VMULPS        X2, X3, X3; \
	VCVTDQ2PS     X8, X8; \
	VMULPS        X3, X8, X8; \
	VADDPS        X8, X0, X0

// KSETUP loads the arguments and constants the kernels share: the four row pointers (SI,
// R8, R9, R10 at w + k·stride), the input (DI), the super-block count (R11), the offset
// in the rows (R13 = 0), the GPR masks and the vector constants (Z31 = 0x0f…, Z30 =
// kShift04, Z26-Z29 and Y25 = kScaleIdx), and zeroes the accumulator Y0.
#define KSETUP \
	MOVQ         w+8(FP), SI; \
	MOVQ         x+16(FP), DI; \
	MOVQ         nb+24(FP), R11; \
	MOVQ         stride+32(FP), AX; \
	LEAQ         (SI)(AX*1), R8; \
	LEAQ         (R8)(AX*1), R9; \
	LEAQ         (R9)(AX*1), R10; \
	MOVQ         $0x3f3f3f3f3f3f3f3f, R14; \
	MOVQ         $0x0f0f0f0f0f0f0f0f, R15; \
	MOVQ         $0x3030303030303030, R12; \
	MOVL         $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z31; \
	VMOVDQU64    kShift04<>(SB), Z30; \
	VMOVDQU64    kScaleIdx<>+0(SB), Z26; \
	VMOVDQU64    kScaleIdx<>+64(SB), Z27; \
	VMOVDQU64    kScaleIdx<>+128(SB), Z28; \
	VMOVDQU64    kScaleIdx<>+192(SB), Z29; \
	VMOVDQU64    kScaleIdx<>+256(SB), Y25; \
	VPXORD       Y0, Y0, Y0; \
	XORQ         R13, R13

// KFINISHMIN stores the four rows' results of a type with mins, lanes 0, 2, 4 and 6 of Y0,
// at out + k·outStride·4.
#define KFINISHMIN \
	VEXTRACTF128 $1, Y0, X1; \
	MOVQ         out+0(FP), DX; \
	MOVQ         outStride+40(FP), CX; \
	SHLQ         $2, CX; \
	VMOVSS       X0, (DX); \
	ADDQ         CX, DX; \
	VEXTRACTPS   $2, X0, (DX); \
	ADDQ         CX, DX; \
	VMOVSS       X1, (DX); \
	ADDQ         CX, DX; \
	VEXTRACTPS   $2, X1, (DX); \
	VZEROUPPER

// KFINISHX2 stores the pair kernels' four results, lanes 0, 2, 4 and 6 of Y0: (row 0,
// input 0) at out, (row 1, input 0) outStride floats on, and the same for input 1
// vecStride floats on.
#define KFINISHX2 \
	VEXTRACTF128 $1, Y0, X1; \
	MOVQ         out+0(FP), DX; \
	MOVQ         outStride+40(FP), CX; \
	SHLQ         $2, CX; \
	MOVQ         vecStride+56(FP), BX; \
	SHLQ         $2, BX; \
	VMOVSS       X0, (DX); \
	VEXTRACTPS   $2, X0, (DX)(CX*1); \
	ADDQ         BX, DX; \
	VMOVSS       X1, (DX); \
	VEXTRACTPS   $2, X1, (DX)(CX*1); \
	VZEROUPPER

// KFINISHSIGNED stores the four rows' results of a signed type, lanes 0-3 of X0.
#define KFINISHSIGNED \
	MOVQ       out+0(FP), DX; \
	MOVQ       outStride+40(FP), CX; \
	SHLQ       $2, CX; \
	VMOVSS     X0, (DX); \
	ADDQ       CX, DX; \
	VEXTRACTPS $1, X0, (DX); \
	ADDQ       CX, DX; \
	VEXTRACTPS $2, X0, (DX); \
	ADDQ       CX, DX; \
	VEXTRACTPS $3, X0, (DX); \
	VZEROUPPER

// func dotQ4_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ4_Kx4AVX512(SB), NOSPLIT, $0-48
	KSETUP

q4kloop:
	Q4KSCALES(SI, Y2, Y3, Y20)
	Q4KSCALES(R8, Y4, Y5, Y21)
	Q4KROW2(SI, R8, Y16, Y24, Y17, Y25)
	Q4KSCALES(R9, Y2, Y3, Y22)
	Q4KSCALES(R10, Y4, Y5, Y23)
	Q4KROW2(R9, R10, Y18, Y26, Y19, Y27)
	KIM8
	KENDMIN(0)
	ADDQ $144, R13
	ADDQ $320, DI
	DECQ R11
	JNZ  q4kloop
	KFINISHMIN
	RET

// KMINSCALES starts a super-block of the row at R for the types with mins: PF asks for
// the next rows, the scales and mins go to Z1 (KSCALEMIN6) and, spread by VPSHUFB, to Z4-Z7
// (Z26-Z29), and PRE loads what the code steps need.
#define KMINSCALES(R, PF, PRE) \
	PF(R); \
	KSCALEMIN6(R); \
	VPSHUFB Z26, Z1, Z4; \
	VPSHUFB Z27, Z1, Z5; \
	VPSHUFB Z28, Z1, Z6; \
	VPSHUFB Z29, Z1, Z7; \
	PRE(R)

// KMINROW512 leaves one super-block's lanes of the row at R in IREG and MREG for the types
// with 6-bit scales and mins (Q4_K, Q5_K) in 512-bit registers: PF asks for the rows ahead,
// PRE loads what NIB needs, and NIB(R, c) leaves the 64 codes of quarter c in Z9; the
// scales spread by VPSHUFB (Z26-Z29) multiply the pairs of products (KDOT64), the doubled
// mins (Y25) the input's block sums.
#define KMINROW512(R, PF, PRE, NIB, IREG, MREG) \
	KMINSCALES(R, PF, PRE); \
	NIB(R, 0); \
	KDOT64(0, Z4, VPMADDWD, IREG); \
	NIB(R, 1); \
	KDOT64(64, Z5, VPDPWSSD, IREG); \
	NIB(R, 2); \
	KDOT64(128, Z6, VPDPWSSD, IREG); \
	NIB(R, 3); \
	KDOT64(192, Z7, VPDPWSSD, IREG); \
	VPSHUFB  Y25, Y1, MREG; \
	VPMADDWD 256(DI), MREG, MREG

// KPF2 and KPF3 ask for the next rows' bytes, two or three lines of a super-block (Q4_K's
// 144 bytes, Q5_K's 176).
#define KPF2(R) PREFETCHT0 KPREFETCH(R)(R13*1); PREFETCHT0 KPREFETCH+64(R)(R13*1)
#define KPF3(R) KPF2(R); PREFETCHT0 KPREFETCH+128(R)(R13*1)

// Q4KPRE loads nothing; Q4KNIB makes Q4_K's codes of quarter C (the nibbles at 16 + 32C).
#define Q4KPRE(R)
#define Q4KNIB(R, C) KNIB4(R, 16+32*C)

// Q5KPRE broadcasts Q5_K's fifth bits (qh, 32 bytes at 16) to Z14 for KNIB5.
#define Q5KPRE(R) VBROADCASTI64X4 16(R)(R13*1), Z14

// Q4KROW512 is KMINROW512 for a Q4_K super-block: the 512-bit form of Q4KROW2, for CPUs
// whose 512-bit instructions are full width. Q5KROW is the same for Q5_K.
#define Q4KROW512(R, IREG, MREG) KMINROW512(R, KPF2, Q4KPRE, Q4KNIB, IREG, MREG)
#define Q5KROW(R, IREG, MREG) KMINROW512(R, KPF3, Q5KPRE, KNIB5, IREG, MREG)

// KMINROWS is the loop of the 512-bit kernels of the types with mins (label L): each
// super-block's four rows by ROW, their lanes summed (KIM16), the float step with d and
// dmin at DOFF, the rows BB bytes on; then the four results stored.
#define KMINROWS(ROW, DOFF, BB, L) \
L: \
	ROW(SI, Z16, Y20); \
	ROW(R8, Z17, Y21); \
	ROW(R9, Z18, Y22); \
	ROW(R10, Z19, Y23); \
	KIM16; \
	KENDMIN(DOFF); \
	ADDQ $BB, R13; \
	ADDQ $320, DI; \
	DECQ R11; \
	JNZ  L; \
	KFINISHMIN; \
	RET

// func dotQ4_Kx4ZAVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)
//
// dotQ4_Kx4AVX512 in 512-bit registers, one row at a time (Q4KROW512), the sixteen lanes
// of each row's I summed by KIM16: the same integers I and M, the same float step.
TEXT ·dotQ4_Kx4ZAVX512(SB), NOSPLIT, $0-48
	KSETUP

	KMINROWS(Q4KROW512, 0, 144, q4kzloop)

// The Q4_K row dots of two rows against two inputs (dotQ4_Kx2x2ZAVX512): each super-block
// of a row is unpacked once (its scales and mins, its four quarters of codes) and
// multiplied by both inputs, where the four-row kernel unpacks it again for each input.
// The four (row, input) pairs take the places of dotQ4_Kx4ZAVX512's four rows, so the
// integers I and M and the float step of each pair are that kernel's.

// KDOT64X2 is KDOT64 against the inputs at DI (into IA) and R9 (into IB).
#define KDOT64X2(XOFF, SC, FIRST, IA, IB) \
	VPMADDUBSW XOFF(DI), Z9, Z10; \
	FIRST      SC, Z10, IA; \
	VPMADDUBSW XOFF(R9), Z9, Z10; \
	FIRST      SC, Z10, IB

// KMINROWX2 is KMINROW512 for the super-block of the row at R against the inputs at DI
// and R9: integer lanes in IA and IB, mins times the block sums in MA and MB; the codes of
// each quarter are made once for both. Q4KROWX2 and Q5KROWX2 are it for Q4_K and Q5_K.
#define KMINROWX2(R, PF, PRE, NIB, IA, IB, MA, MB) \
	KMINSCALES(R, PF, PRE); \
	NIB(R, 0); \
	KDOT64X2(0, Z4, VPMADDWD, IA, IB); \
	NIB(R, 1); \
	KDOT64X2(64, Z5, VPDPWSSD, IA, IB); \
	NIB(R, 2); \
	KDOT64X2(128, Z6, VPDPWSSD, IA, IB); \
	NIB(R, 3); \
	KDOT64X2(192, Z7, VPDPWSSD, IA, IB); \
	VPSHUFB  Y25, Y1, MA; \
	VPMADDWD 256(R9), MA, MB; \
	VPMADDWD 256(DI), MA, MA

#define Q4KROWX2(R, IA, IB, MA, MB) KMINROWX2(R, KPF2, Q4KPRE, Q4KNIB, IA, IB, MA, MB)
#define Q5KROWX2(R, IA, IB, MA, MB) KMINROWX2(R, KPF3, Q5KPRE, KNIB5, IA, IB, MA, MB)

// KMINX2 is the loop of the pair kernels (label L): each super-block of the rows at SI and
// R8 against both inputs by ROW, the lanes summed (KIM16), the float step (KENDMINX2), the
// rows BB bytes on; then the four results stored (KFINISHX2).
#define KMINX2(ROW, BB, L) \
L: \
	ROW(SI, Z16, Z18, Y20, Y22); \
	ROW(R8, Z17, Z19, Y21, Y23); \
	KIM16; \
	KENDMINX2(0); \
	ADDQ $BB, R13; \
	ADDQ $320, DI; \
	ADDQ $320, R9; \
	DECQ R11; \
	JNZ  L; \
	KFINISHX2; \
	RET

// KENDMINX2 is KENDMIN for the pairs (row SI, input DI), (R8, DI), (SI, R9), (R8, R9): the
// rows' d and dmin twice, times DI's scale in the lower half and R9's in the upper.
#define KENDMINX2(DOFF) \
	VMOVD         DOFF(SI)(R13*1), X3; \
	VPINSRD       $1, DOFF(R8)(R13*1), X3, X3; \
	VPINSRD       $2, DOFF(SI)(R13*1), X3, X3; \
	VPINSRD       $3, DOFF(R8)(R13*1), X3, X3; \
	VCVTPH2PS     X3, Y3; \
	VBROADCASTSS  288(DI), X8; \
	VBROADCASTSS  288(R9), X10; \
	VINSERTF128   $1, X10, Y8, Y8; \
	VMULPS        Y8, Y3, Y3; \
	VCVTDQ2PS     Y2, Y2; \
	VMULPS        Y3, Y2, Y2; \
	VMOVSHDUP     Y2, Y3; \
	VSUBPS        Y3, Y2, Y2; \
	VADDPS        Y2, Y0, Y0

// func dotQ4_Kx2x2ZAVX512(out *float32, w *byte, x *byte, nb, stride, outStride int, x2 *byte, vecStride int)
//
// Rows w and w+stride against the inputs x and x2: row k and x to out[k·outStride], row k
// and x2 to out[vecStride + k·outStride]; the same bits as dotQ4_Kx4ZAVX512 for each.
// KSETUP's third and fourth row pointers are not used: R9 holds x2.
TEXT ·dotQ4_Kx2x2ZAVX512(SB), NOSPLIT, $0-64
	KSETUP
	MOVQ x2+48(FP), R9
	KMINX2(Q4KROWX2, 144, q4kx2loop)

// func dotQ5_Kx2x2AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int, x2 *byte, vecStride int)
//
// dotQ4_Kx2x2ZAVX512 for Q5_K rows: the same bits as dotQ5_Kx4AVX512 for each pair.
TEXT ·dotQ5_Kx2x2AVX512(SB), NOSPLIT, $0-64
	KSETUP
	MOVL         $0x10101010, AX
	VPBROADCASTD AX, Z13
	MOVQ         x2+48(FP), R9
	KMINX2(Q5KROWX2, 176, q5kx2loop)

// k16ScaleIdx are the VPERMW indexes that spread sixteen scale words, one per 16 values,
// over a 512-bit register of 64 values: words 4c..4c+3, each eight times
// (k16ScaleIdx+64c).
DATA k16ScaleIdx<>+0(SB)/8, $0x0000000000000000
DATA k16ScaleIdx<>+8(SB)/8, $0x0000000000000000
DATA k16ScaleIdx<>+16(SB)/8, $0x0001000100010001
DATA k16ScaleIdx<>+24(SB)/8, $0x0001000100010001
DATA k16ScaleIdx<>+32(SB)/8, $0x0002000200020002
DATA k16ScaleIdx<>+40(SB)/8, $0x0002000200020002
DATA k16ScaleIdx<>+48(SB)/8, $0x0003000300030003
DATA k16ScaleIdx<>+56(SB)/8, $0x0003000300030003
DATA k16ScaleIdx<>+64(SB)/8, $0x0004000400040004
DATA k16ScaleIdx<>+72(SB)/8, $0x0004000400040004
DATA k16ScaleIdx<>+80(SB)/8, $0x0005000500050005
DATA k16ScaleIdx<>+88(SB)/8, $0x0005000500050005
DATA k16ScaleIdx<>+96(SB)/8, $0x0006000600060006
DATA k16ScaleIdx<>+104(SB)/8, $0x0006000600060006
DATA k16ScaleIdx<>+112(SB)/8, $0x0007000700070007
DATA k16ScaleIdx<>+120(SB)/8, $0x0007000700070007
DATA k16ScaleIdx<>+128(SB)/8, $0x0008000800080008
DATA k16ScaleIdx<>+136(SB)/8, $0x0008000800080008
DATA k16ScaleIdx<>+144(SB)/8, $0x0009000900090009
DATA k16ScaleIdx<>+152(SB)/8, $0x0009000900090009
DATA k16ScaleIdx<>+160(SB)/8, $0x000a000a000a000a
DATA k16ScaleIdx<>+168(SB)/8, $0x000a000a000a000a
DATA k16ScaleIdx<>+176(SB)/8, $0x000b000b000b000b
DATA k16ScaleIdx<>+184(SB)/8, $0x000b000b000b000b
DATA k16ScaleIdx<>+192(SB)/8, $0x000c000c000c000c
DATA k16ScaleIdx<>+200(SB)/8, $0x000c000c000c000c
DATA k16ScaleIdx<>+208(SB)/8, $0x000d000d000d000d
DATA k16ScaleIdx<>+216(SB)/8, $0x000d000d000d000d
DATA k16ScaleIdx<>+224(SB)/8, $0x000e000e000e000e
DATA k16ScaleIdx<>+232(SB)/8, $0x000e000e000e000e
DATA k16ScaleIdx<>+240(SB)/8, $0x000f000f000f000f
DATA k16ScaleIdx<>+248(SB)/8, $0x000f000f000f000f
GLOBL k16ScaleIdx<>(SB), RODATA|NOPTR, $256

// Q6KHALF makes the 128 codes of half H of a Q6_K super-block (ql at 64H, qh at 128+32H
// of the block at R) and adds their products to IREG: values 128H..128H+63 in Z9 (the low
// nibbles of ql, the bits of quarters 0 and 1 from qh), then 128H+64..128H+127 (the high
// nibbles, quarters 2 and 3). Z13 holds the ql bytes, Z14 the qh bytes broadcast;
// Z31 = 0x0f…, Z28 = 0x30…, Z29 = q6ShiftLo, Z30 = q6ShiftHi; SA and SB are the scale
// words.
#define Q6KHALF(R, H, SA, SB, FIRST, IREG) \
	VMOVDQU64       (64*H)(R)(R13*1), Z13; \
	VBROADCASTI64X4 (128+32*H)(R)(R13*1), Z14; \
	VPSLLVW         Z29, Z14, Z9; \
	VPANDD          Z28, Z9, Z9; \
	VPTERNLOGD      $0xf8, Z31, Z13, Z9; \
	KDOT64(128*H, SA, FIRST, IREG); \
	VPSRLW          $4, Z13, Z13; \
	VPSRLVW         Z30, Z14, Z9; \
	VPANDD          Z28, Z9, Z9; \
	VPTERNLOGD      $0xf8, Z31, Z13, Z9; \
	KDOT64(128*H+64, SB, VPDPWSSD, IREG)

// K16SCALES spreads the sixteen scale words in Y1 over Z4-Z7 (Z24-Z27 = k16ScaleIdx).
#define K16SCALES \
	VPERMW Z1, Z24, Z4; \
	VPERMW Z1, Z25, Z5; \
	VPERMW Z1, Z26, Z6; \
	VPERMW Z1, Z27, Z7

// Q6KROW leaves one Q6_K super-block's integer lanes of the row at R in IREG and Σ sc·bsum
// in the lanes of CREG: the int8 scales widened to words (Y1) and spread (Z4-Z7), the
// codes' products.
#define Q6KROW(R, IREG, CREG) \
	PREFETCHT0 KPREFETCH(R)(R13*1); \
	PREFETCHT0 KPREFETCH+64(R)(R13*1); \
	PREFETCHT0 KPREFETCH+128(R)(R13*1); \
	VPMOVSXBW  192(R)(R13*1), Y1; \
	K16SCALES; \
	Q6KHALF(R, 0, Z4, Z5, VPMADDWD, IREG); \
	Q6KHALF(R, 1, Z6, Z7, VPDPWSSD, IREG); \
	VPMADDWD   256(DI), Y1, CREG

// K16IDX loads k16ScaleIdx into Z24-Z27.
#define K16IDX \
	VMOVDQU64 k16ScaleIdx<>+0(SB), Z24; \
	VMOVDQU64 k16ScaleIdx<>+64(SB), Z25; \
	VMOVDQU64 k16ScaleIdx<>+128(SB), Z26; \
	VMOVDQU64 k16ScaleIdx<>+192(SB), Z27

// func dotQ6_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ6_Kx4AVX512(SB), NOSPLIT, $0-48
	KSETUP
	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Z28
	VMOVDQU64    q6ShiftLo<>(SB), Z29
	VMOVDQU64    q6ShiftHi<>(SB), Z30
	K16IDX

q6kloop:
	Q6KROW(SI, Z16, Y20)
	Q6KROW(R8, Z17, Y21)
	Q6KROW(R9, Z18, Y22)
	Q6KROW(R10, Z19, Y23)
	KENDSIGNED(208, 5)
	ADDQ $210, R13
	ADDQ $320, DI
	DECQ R11
	JNZ  q6kloop
	KFINISHSIGNED
	RET

// func dotQ5_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ5_Kx4AVX512(SB), NOSPLIT, $0-48
	KSETUP
	MOVL         $0x10101010, AX
	VPBROADCASTD AX, Z13

	KMINROWS(Q5KROW, 0, 176, q5kloop)

// K2BITHALF adds the 128 products of half H of a Q2_K or Q3_K super-block to IREG: the
// 2-bit codes of the 32 bytes at QS+32H, shifted (Z30 = k2Shift02, Z29 = k2Shift46) and
// masked (Z28 = 0x03…), with HIGHA and HIGHB (for Q3_K the third bits) added to each 64,
// times the scale words SA and SB.
#define K2BITHALF(R, QS, H, SA, SB, FIRST, HIGHA, HIGHB, IREG) \
	VBROADCASTI64X4 (QS+32*H)(R)(R13*1), Z14; \
	VPSRLVW         Z30, Z14, Z9; \
	VPANDD          Z28, Z9, Z9; \
	HIGHA; \
	KDOT64(128*H, SA, FIRST, IREG); \
	VPSRLVW         Z29, Z14, Z9; \
	VPANDD          Z28, Z9, Z9; \
	HIGHB; \
	KDOT64(128*H+64, SB, VPDPWSSD, IREG)

#define KNOHIGH

// Q3HIGHc adds 4 to the codes of chunk c whose third bit is set in the hmask bytes
// broadcast in Z15 (Z12 = 0x04…).
#define Q3HIGH0 VPTESTMB q5Sel<>+0(SB), Z15, K1; VPADDB Z12, Z9, K1, Z9
#define Q3HIGH1 VPTESTMB q5Sel<>+64(SB), Z15, K1; VPADDB Z12, Z9, K1, Z9
#define Q3HIGH2 VPTESTMB q5Sel<>+128(SB), Z15, K1; VPADDB Z12, Z9, K1, Z9
#define Q3HIGH3 VPTESTMB q5Sel<>+192(SB), Z15, K1; VPADDB Z12, Z9, K1, Z9

// Q2KROW leaves one Q2_K super-block's lanes of the row at R in IREG and its min lanes
// (the min nibbles times the input's block sums) in MREG: the scale and min nibbles
// widened to words (Y1, Y2), the codes' products.
#define Q2KROW(R, IREG, MREG) \
	PREFETCHT0 KPREFETCH(R)(R13*1); \
	PREFETCHT0 KPREFETCH+64(R)(R13*1); \
	VPMOVZXBW  (R)(R13*1), Y1; \
	VPSRLW     $4, Y1, Y2; \
	VPANDD     Y31, Y1, Y1; \
	K16SCALES; \
	VPMADDWD   256(DI), Y2, MREG; \
	K2BITHALF(R, 16, 0, Z4, Z5, VPMADDWD, KNOHIGH, KNOHIGH, IREG); \
	K2BITHALF(R, 16, 1, Z6, Z7, VPDPWSSD, KNOHIGH, KNOHIGH, IREG)

// Q3KROW leaves one Q3_K super-block's lanes of the row at R in IREG and Σ sc·bsum in
// CREG: the signed scales, the codes (low two bits from qs at 32, the third from hmask,
// broadcast in Z15).
#define Q3KROW(R, IREG, CREG) \
	PREFETCHT0 KPREFETCH(R)(R13*1); \
	PREFETCHT0 KPREFETCH+64(R)(R13*1); \
	Q3KSCALES(R); \
	K16SCALES; \
	VBROADCASTI64X4 (R)(R13*1), Z15; \
	K2BITHALF(R, 32, 0, Z4, Z5, VPMADDWD, Q3HIGH0, Q3HIGH1, IREG); \
	K2BITHALF(R, 32, 1, Z6, Z7, VPDPWSSD, Q3HIGH2, Q3HIGH3, IREG); \
	VPMADDWD 256(DI), Y1, CREG

// K2SETUP512 is the part of the Q2_K and Q3_K kernels' setup after KSETUP.
#define K2SETUP512 \
	VMOVDQU64    k2Shift02<>(SB), Z30; \
	VMOVDQU64    k2Shift46<>(SB), Z29; \
	MOVL         $0x03030303, AX; \
	VPBROADCASTD AX, Z28; \
	MOVL         $0x04040404, AX; \
	VPBROADCASTD AX, Z12; \
	MOVL         $0x00200020, AX; \
	VPBROADCASTD AX, Z11; \
	MOVQ         $0x0303030303030303, R12; \
	K16IDX

// func dotQ2_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ2_Kx4AVX512(SB), NOSPLIT, $0-48
	KSETUP
	K2SETUP512

	KMINROWS(Q2KROW, 80, 84, q2kloop)

// func dotQ3_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)
TEXT ·dotQ3_Kx4AVX512(SB), NOSPLIT, $0-48
	KSETUP
	K2SETUP512

q3kloop:
	Q3KROW(SI, Z16, Y20)
	Q3KROW(R8, Z17, Y21)
	Q3KROW(R9, Z18, Y22)
	Q3KROW(R10, Z19, Y23)
	KENDSIGNED(108, 2)
	ADDQ $110, R13
	ADDQ $320, DI
	DECQ R11
	JNZ  q3kloop
	KFINISHSIGNED
	RET
