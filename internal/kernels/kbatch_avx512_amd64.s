//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"
#include "kquant_avx512_amd64.h"

// The batched k-quant products with AVX-512 VNNI (kbatch.go): each row is first prepared
// (prepQ4_K and friends: its codes unpacked to bytes, its scales as int32 differences, its
// min or scale pairs, 128·Σ sc·q, d and dmin), then four prepared rows are multiplied by a
// tile of sixteen input vectors, one vector per lane (gemm*): every group of four codes is
// broadcast and multiplied with the sixteen vectors' four codes (plus 128, unsigned) by
// VPDPBUSD, into a sum that runs over the super-block; after each sub-block the sum is
// multiplied by the scale difference Δ_j = sc_j − sc_{j+1} and added to I, which leaves
// I = Σ_j sc_j·S_j exactly (int32 arithmetic wraps, and the result fits). The inputs'
// +128 is taken back as 128·Σ sc·q, the mins or scales times the block sums by VPDPWSSD,
// and the float step of the definition runs on the sixteen lanes.

// kScByteIdx are the VPSHUFB indexes that make, from the 16 bytes
// [sc0..sc3, m0..m3, sc4..sc7, m4..m7] in every 128-bit lane, each value's scale as a byte
// for a register of 64 values: scale 2c in the lower 256 bits, 2c+1 in the upper
// (kScByteIdx+64c).

DATA kScByteIdx<>+0(SB)/8, $0x0000000000000000
DATA kScByteIdx<>+8(SB)/8, $0x0000000000000000
DATA kScByteIdx<>+16(SB)/8, $0x0000000000000000
DATA kScByteIdx<>+24(SB)/8, $0x0000000000000000
DATA kScByteIdx<>+32(SB)/8, $0x0101010101010101
DATA kScByteIdx<>+40(SB)/8, $0x0101010101010101
DATA kScByteIdx<>+48(SB)/8, $0x0101010101010101
DATA kScByteIdx<>+56(SB)/8, $0x0101010101010101
DATA kScByteIdx<>+64(SB)/8, $0x0202020202020202
DATA kScByteIdx<>+72(SB)/8, $0x0202020202020202
DATA kScByteIdx<>+80(SB)/8, $0x0202020202020202
DATA kScByteIdx<>+88(SB)/8, $0x0202020202020202
DATA kScByteIdx<>+96(SB)/8, $0x0303030303030303
DATA kScByteIdx<>+104(SB)/8, $0x0303030303030303
DATA kScByteIdx<>+112(SB)/8, $0x0303030303030303
DATA kScByteIdx<>+120(SB)/8, $0x0303030303030303
DATA kScByteIdx<>+128(SB)/8, $0x0808080808080808
DATA kScByteIdx<>+136(SB)/8, $0x0808080808080808
DATA kScByteIdx<>+144(SB)/8, $0x0808080808080808
DATA kScByteIdx<>+152(SB)/8, $0x0808080808080808
DATA kScByteIdx<>+160(SB)/8, $0x0909090909090909
DATA kScByteIdx<>+168(SB)/8, $0x0909090909090909
DATA kScByteIdx<>+176(SB)/8, $0x0909090909090909
DATA kScByteIdx<>+184(SB)/8, $0x0909090909090909
DATA kScByteIdx<>+192(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA kScByteIdx<>+200(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA kScByteIdx<>+208(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA kScByteIdx<>+216(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA kScByteIdx<>+224(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA kScByteIdx<>+232(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA kScByteIdx<>+240(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA kScByteIdx<>+248(SB)/8, $0x0b0b0b0b0b0b0b0b
GLOBL kScByteIdx<>(SB), RODATA|NOPTR, $256

// kPick takes the scales (kPick+0) and the mins (kPick+16) out of
// [sc0..sc3, m0..m3, sc4..sc7, m4..m7].
DATA kPick<>+0(SB)/8, $0x0b0a090803020100
DATA kPick<>+8(SB)/8, $0x8080808080808080
DATA kPick<>+16(SB)/8, $0x0f0e0d0c07060504
DATA kPick<>+24(SB)/8, $0x8080808080808080
GLOBL kPick<>(SB), RODATA|NOPTR, $32

// k6ScByteIdx makes, from sixteen int8 scales (one per 16 values) in every 128-bit lane,
// each value's scale as a byte for a register of 64 values: scales 4c..4c+3, one per
// 128-bit lane (k6ScByteIdx+64c).
DATA k6ScByteIdx<>+0(SB)/8, $0x0000000000000000
DATA k6ScByteIdx<>+8(SB)/8, $0x0000000000000000
DATA k6ScByteIdx<>+16(SB)/8, $0x0101010101010101
DATA k6ScByteIdx<>+24(SB)/8, $0x0101010101010101
DATA k6ScByteIdx<>+32(SB)/8, $0x0202020202020202
DATA k6ScByteIdx<>+40(SB)/8, $0x0202020202020202
DATA k6ScByteIdx<>+48(SB)/8, $0x0303030303030303
DATA k6ScByteIdx<>+56(SB)/8, $0x0303030303030303
DATA k6ScByteIdx<>+64(SB)/8, $0x0404040404040404
DATA k6ScByteIdx<>+72(SB)/8, $0x0404040404040404
DATA k6ScByteIdx<>+80(SB)/8, $0x0505050505050505
DATA k6ScByteIdx<>+88(SB)/8, $0x0505050505050505
DATA k6ScByteIdx<>+96(SB)/8, $0x0606060606060606
DATA k6ScByteIdx<>+104(SB)/8, $0x0606060606060606
DATA k6ScByteIdx<>+112(SB)/8, $0x0707070707070707
DATA k6ScByteIdx<>+120(SB)/8, $0x0707070707070707
DATA k6ScByteIdx<>+128(SB)/8, $0x0808080808080808
DATA k6ScByteIdx<>+136(SB)/8, $0x0808080808080808
DATA k6ScByteIdx<>+144(SB)/8, $0x0909090909090909
DATA k6ScByteIdx<>+152(SB)/8, $0x0909090909090909
DATA k6ScByteIdx<>+160(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA k6ScByteIdx<>+168(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA k6ScByteIdx<>+176(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA k6ScByteIdx<>+184(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA k6ScByteIdx<>+192(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA k6ScByteIdx<>+200(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA k6ScByteIdx<>+208(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA k6ScByteIdx<>+216(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA k6ScByteIdx<>+224(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA k6ScByteIdx<>+232(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA k6ScByteIdx<>+240(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k6ScByteIdx<>+248(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL k6ScByteIdx<>(SB), RODATA|NOPTR, $256

// KREDUCE16 sums the sixteen dwords of Z into the low dword of X (T is a scratch X).
#define KREDUCE16(Z, Y, X, TY, TX) \
	VEXTRACTI64X4 $1, Z, TY; \
	VPADDD        TY, Y, Y; \
	VEXTRACTI128  $1, Y, TX; \
	VPADDD        TX, X, X; \
	VPSHUFD       $0x4e, X, TX; \
	VPADDD        TX, X, X; \
	VPSHUFD       $0xb1, X, TX; \
	VPADDD        TX, X, X

// KPREPSETUP loads the arguments of a prep kernel: the row at SI (offset R13 = 0), nb in
// R11, the destination DI; the GPR masks of KSCALEMIN6, Z31 = 0x0f…, Z30 = kShift04 and
// Z16 = 0.
#define KPREPSETUP \
	MOVQ         dst+0(FP), DI; \
	MOVQ         w+8(FP), SI; \
	MOVQ         nb+16(FP), R11; \
	XORQ         R13, R13; \
	MOVQ         $0x3f3f3f3f3f3f3f3f, R14; \
	MOVQ         $0x0f0f0f0f0f0f0f0f, R15; \
	MOVQ         $0x3030303030303030, R12; \
	MOVL         $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z31; \
	VMOVDQU64    kShift04<>(SB), Z30; \
	VPXORD       Z16, Z16, Z16

// KPREPEND stores 128 times the sum in Z15 (Σ sc·q) at 352(DI).
#define KPREPEND \
	KREDUCE16(Z15, Y15, X15, Y2, X2); \
	VPSLLD $7, X15, X15; \
	VMOVD  X15, 352(DI)

// KPREPSCALEMIN stores what a Q4_K or Q5_K super-block's scales and mins give (X1 holds
// [sc0..sc3, m0..m3, sc4..sc7, m4..m7]): the eight scale differences at 256(DI), the mins
// as words m0..m7 (the pairs [m_2k, m_2k+1]) at 320(DI), d and dmin (the fp16 pair at
// (R)(R13*1)) at 356(DI).
#define KPREPSCALEMIN(R) \
	VPSHUFB       kPick<>+0(SB), X1, X2; \
	VPMOVZXBD     X2, Y2; \
	VALIGND       $1, Y2, Y16, Y3; \
	VPSUBD        Y3, Y2, Y2; \
	VMOVDQU       Y2, 256(DI); \
	VPSHUFB       kPick<>+16(SB), X1, X2; \
	VPMOVZXBW     X2, X2; \
	VMOVDQU       X2, 320(DI); \
	VPBROADCASTD  (R)(R13*1), X2; \
	VCVTPH2PS     X2, X2; \
	VMOVQ         X2, 356(DI)

// KPREPCODES stores the 64 codes in Z9 at OFF(DI) and adds Σ sc·q of them to Z15 (the
// scale bytes made by VPSHUFB with IDX from Z1).
#define KPREPCODES(OFF, IDX) \
	VMOVDQU64 Z9, OFF(DI); \
	VPSHUFB   IDX, Z1, Z4; \
	VPDPBUSD  Z4, Z9, Z15

// The gemm kernels multiply the four prepared rows at prep + k·prepStride (k = 0..3) by the
// tile of sixteen vectors at tile, nb super-blocks, and store the 16 × 4 results at res
// (vector v's four rows at res + 16v). gemmK32Min serves the types with a scale per 32
// values and mins (Q4_K, Q5_K), gemmK16Min those with a scale per 16 and mins (Q2_K),
// gemmK16Signed the signed ones (Q6_K: shift 5, Q3_K: shift 2, the offset 32 or 4 as a
// shift of the scale pairs' sum). Each row's running sum is kept in two registers, the
// even groups in one and the odd in the other (Z0-Z3 and Z16-Z19), so that eight chains of
// VPDPBUSD run side by side; their sum is what each scale difference multiplies. The rows'
// prepared super-blocks are at SI, R8, R9, R10, the tile's at DI.

// KGROUP multiplies group G of four values: the sixteen vectors' codes (Z24) by each row's
// four broadcast codes, into the running sums S0-S3.
#define KGROUP(G, S0, S1, S2, S3) \
	VMOVDQU64     (64*(G))(DI), Z24; \
	VPDPBUSD.BCST (4*(G))(SI), Z24, S0; \
	VPDPBUSD.BCST (4*(G))(R8), Z24, S1; \
	VPDPBUSD.BCST (4*(G))(R9), Z24, S2; \
	VPDPBUSD.BCST (4*(G))(R10), Z24, S3

#define KGROUPEVEN(G) KGROUP(G, Z0, Z1, Z2, Z3)
#define KGROUPODD(G) KGROUP(G, Z16, Z17, Z18, Z19)

// KDELTAROW adds row R's running sum (S + T) times its scale difference J to I.
#define KDELTAROW(R, J, S, T, I) \
	VPADDD       T, S, Z25; \
	VPMULLD.BCST (256+4*(J))(R), Z25, Z25; \
	VPADDD       Z25, I, I

// KDELTA ends sub-block J for the four rows.
#define KDELTA(J) \
	KDELTAROW(SI, J, Z0, Z16, Z4); \
	KDELTAROW(R8, J, Z1, Z17, Z5); \
	KDELTAROW(R9, J, Z2, Z18, Z6); \
	KDELTAROW(R10, J, Z3, Z19, Z7)

// KSUB32 is sub-block J of 32 values (eight groups); KSUB16 of 16 values (four groups).
#define KSUB32(J) \
	KGROUPEVEN(8*(J)); KGROUPODD(8*(J)+1); KGROUPEVEN(8*(J)+2); KGROUPODD(8*(J)+3); \
	KGROUPEVEN(8*(J)+4); KGROUPODD(8*(J)+5); KGROUPEVEN(8*(J)+6); KGROUPODD(8*(J)+7); \
	KDELTA(J)

#define KSUB16(J) \
	KGROUPEVEN(4*(J)); KGROUPODD(4*(J)+1); KGROUPEVEN(4*(J)+2); KGROUPODD(4*(J)+3); \
	KDELTA(J)

// KPAIRS adds, for pair J of block sums, each row's min or scale pair times the sixteen
// vectors' pairs to M0-M3 (Z8-Z11).
#define KPAIRS(J) \
	VMOVDQU64     (4096+64*(J))(DI), Z24; \
	VPDPWSSD.BCST (320+4*(J))(SI), Z24, Z8; \
	VPDPWSSD.BCST (320+4*(J))(R8), Z24, Z9; \
	VPDPWSSD.BCST (320+4*(J))(R9), Z24, Z10; \
	VPDPWSSD.BCST (320+4*(J))(R10), Z24, Z11

// KFLOATMIN is a row's float step for a type with mins: I less 128·Σ sc·q, then
// acc += float32(I)·(xd·d) − float32(M)·(xd·dmin), the sixteen vectors' scales in Z26.
#define KFLOATMIN(R, I, M, ACC) \
	VPSUBD.BCST 352(R), I, I; \
	VMULPS.BCST 356(R), Z26, Z27; \
	VMULPS.BCST 360(R), Z26, Z28; \
	VCVTDQ2PS   I, I; \
	VMULPS      Z27, I, I; \
	VCVTDQ2PS   M, M; \
	VMULPS      Z28, M, M; \
	VSUBPS      M, I, I; \
	VADDPS      I, ACC, ACC

// KFLOATSIGNED is a row's float step for a signed type: I less 128·Σ sc·q less C shifted
// by X29 (times the offset), then acc += float32(I)·(xd·d).
#define KFLOATSIGNED(R, I, C, ACC) \
	VPSUBD.BCST 352(R), I, I; \
	VMULPS.BCST 356(R), Z26, Z27; \
	VPSLLD      X29, C, C; \
	VPSUBD      C, I, I; \
	VCVTDQ2PS   I, I; \
	VMULPS      Z27, I, I; \
	VADDPS      I, ACC, ACC

// KGEMMSETUP loads the arguments, the shift into X29, the prefetch pointer and step into
// R11 and R12, and zeroes the accumulators Z12-Z15.
#define KGEMMSETUP \
	MOVQ   prep+8(FP), SI; \
	MOVQ   tile+16(FP), DI; \
	MOVQ   nb+24(FP), CX; \
	MOVQ   prepStride+32(FP), AX; \
	LEAQ   (SI)(AX*1), R8; \
	LEAQ   (R8)(AX*1), R9; \
	LEAQ   (R9)(AX*1), R10; \
	MOVQ   shift+40(FP), AX; \
	VMOVQ  AX, X29; \
	MOVQ   pf+48(FP), R11; \
	MOVQ   pfStep+56(FP), R12; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15

// KGEMMSTART asks for the next pfStep bytes of the rows to come (R11 on to R12) in L2,
// and zeroes a super-block's running sums (Z0-Z3, Z16-Z19), I (Z4-Z7), M (Z8-Z11).
#define KGEMMSTART(LPF, LDONE) \
	LEAQ       (R11)(R12*1), BX; \
	CMPQ       R11, BX; \
	JAE        LDONE; \
LPF: \
	PREFETCHT1 (R11); \
	ADDQ       $64, R11; \
	CMPQ       R11, BX; \
	JB         LPF; \
	MOVQ       BX, R11; \
LDONE: \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11

// KPAIRS32 is KPAIRS for pair K of 32-value sums (the types with a min per 32 values).
#define KPAIRS32(K) \
	VMOVDQU64     (4672+64*(K))(DI), Z24; \
	VPDPWSSD.BCST (320+4*(K))(SI), Z24, Z8; \
	VPDPWSSD.BCST (320+4*(K))(R8), Z24, Z9; \
	VPDPWSSD.BCST (320+4*(K))(R9), Z24, Z10; \
	VPDPWSSD.BCST (320+4*(K))(R10), Z24, Z11

// KGEMMPAIRS runs the eight pairs of block sums and loads the sixteen vectors' scales;
// KGEMMPAIRS32 the four pairs of 32-value sums (half the multiplies).
#define KGEMMPAIRS \
	KPAIRS(0); KPAIRS(1); KPAIRS(2); KPAIRS(3); KPAIRS(4); KPAIRS(5); KPAIRS(6); KPAIRS(7); \
	VMOVUPS 4608(DI), Z26

#define KGEMMPAIRS32 \
	KPAIRS32(0); KPAIRS32(1); KPAIRS32(2); KPAIRS32(3); \
	VMOVUPS 4608(DI), Z26

// KGEMMNEXT moves to the next super-block and loops to L while there is one.
#define KGEMMNEXT \
	ADDQ $384, SI; \
	ADDQ $384, R8; \
	ADDQ $384, R9; \
	ADDQ $384, R10; \
	ADDQ $4928, DI; \
	DECQ CX

// KGEMMSTORE stores the four rows' sixteen results at res, vector by vector: vector v's
// four rows at res + 16v. Two rounds of interleaves leave vector 4L+j's rows in lane L of
// Z4+j, and two of lane shuffles gather lane L of Z4-Z7 into Z(L).
#define KGEMMSTORE \
	MOVQ        res+0(FP), DX; \
	VPUNPCKLDQ  Z13, Z12, Z0; \
	VPUNPCKHDQ  Z13, Z12, Z1; \
	VPUNPCKLDQ  Z15, Z14, Z2; \
	VPUNPCKHDQ  Z15, Z14, Z3; \
	VPUNPCKLQDQ Z2, Z0, Z4; \
	VPUNPCKHQDQ Z2, Z0, Z5; \
	VPUNPCKLQDQ Z3, Z1, Z6; \
	VPUNPCKHQDQ Z3, Z1, Z7; \
	VSHUFI32X4  $0x44, Z5, Z4, Z0; \
	VSHUFI32X4  $0x44, Z7, Z6, Z1; \
	VSHUFI32X4  $0xee, Z5, Z4, Z2; \
	VSHUFI32X4  $0xee, Z7, Z6, Z3; \
	VSHUFI32X4  $0x88, Z1, Z0, Z4; \
	VSHUFI32X4  $0xdd, Z1, Z0, Z5; \
	VSHUFI32X4  $0x88, Z3, Z2, Z6; \
	VSHUFI32X4  $0xdd, Z3, Z2, Z7; \
	VMOVUPS     Z4, (DX); \
	VMOVUPS     Z5, 64(DX); \
	VMOVUPS     Z6, 128(DX); \
	VMOVUPS     Z7, 192(DX); \
	VZEROUPPER

// K2PREPHALF stores the 128 codes of half H of a Q2_K or Q3_K super-block (the 2-bit codes
// of the 32 bytes at QS+32H, shifted by Z29 = k2Shift02 and Z27 = k2Shift46 and masked by
// Z28 = 0x03…, with HIGHA and HIGHB, Q3_K's third bits, added) at 128H(DI), and adds
// Σ sc·q to Z15 (Z1 holds the sixteen scales as bytes in every lane).
#define K2PREPHALF(R, QS, H, HIGHA, HIGHB) \
	VBROADCASTI64X4 (QS+32*H)(R)(R13*1), Z14; \
	VPSRLVW         Z29, Z14, Z9; \
	VPANDD          Z28, Z9, Z9; \
	HIGHA; \
	KPREPCODES(128*H, k6ScByteIdx<>+128*H(SB)); \
	VPSRLVW         Z27, Z14, Z9; \
	VPANDD          Z28, Z9, Z9; \
	HIGHB; \
	KPREPCODES(128*H+64, k6ScByteIdx<>+128*H+64(SB))

#define KPNOHIGH

// KP3HIGHc adds 4 to the codes of chunk c whose third bit is set in the hmask bytes
// broadcast in Z13 (Z12 = 0x04…).
#define KP3HIGH0 VPTESTMB q5Sel<>+0(SB), Z13, K1; VPADDB Z12, Z9, K1, Z9
#define KP3HIGH1 VPTESTMB q5Sel<>+64(SB), Z13, K1; VPADDB Z12, Z9, K1, Z9
#define KP3HIGH2 VPTESTMB q5Sel<>+128(SB), Z13, K1; VPADDB Z12, Z9, K1, Z9
#define KP3HIGH3 VPTESTMB q5Sel<>+192(SB), Z13, K1; VPADDB Z12, Z9, K1, Z9

// KPREPDELTA16 stores the differences of the sixteen scales (dwords in Z2) at 256(DI).
#define KPREPDELTA16 \
	VALIGND   $1, Z2, Z16, Z3; \
	VPSUBD    Z3, Z2, Z2; \
	VMOVDQU64 Z2, 256(DI)

// K2PREPSETUP is the part of the Q2_K and Q3_K prep kernels' setup after KPREPSETUP.
#define K2PREPSETUP \
	VMOVDQU64    k2Shift02<>(SB), Z29; \
	VMOVDQU64    k2Shift46<>(SB), Z27; \
	MOVL         $0x03030303, AX; \
	VPBROADCASTD AX, Z28; \
	MOVL         $0x04040404, AX; \
	VPBROADCASTD AX, Z12; \
	MOVL         $0x20202020, AX; \
	VPBROADCASTD AX, X26; \
	MOVQ         $0x0303030303030303, R12

// func prepQ4_KAVX512(dst *byte, w *byte, nb int)
TEXT ·prepQ4_KAVX512(SB), NOSPLIT, $0-24
	KPREPSETUP

q4kprep:
	VPXORD Z15, Z15, Z15
	KSCALEMIN6(SI)
	KNIB4(SI, 16)
	KPREPCODES(0, kScByteIdx<>+0(SB))
	KNIB4(SI, 48)
	KPREPCODES(64, kScByteIdx<>+64(SB))
	KNIB4(SI, 80)
	KPREPCODES(128, kScByteIdx<>+128(SB))
	KNIB4(SI, 112)
	KPREPCODES(192, kScByteIdx<>+192(SB))
	KPREPEND
	KPREPSCALEMIN(SI)
	ADDQ $144, R13
	ADDQ $384, DI
	DECQ R11
	JNZ  q4kprep
	VZEROUPPER
	RET

// func prepQ5_KAVX512(dst *byte, w *byte, nb int)
TEXT ·prepQ5_KAVX512(SB), NOSPLIT, $0-24
	KPREPSETUP
	MOVL         $0x10101010, AX
	VPBROADCASTD AX, Z13

q5kprep:
	VPXORD Z15, Z15, Z15
	KSCALEMIN6(SI)
	VBROADCASTI64X4 16(SI)(R13*1), Z14
	KNIB5(SI, 0)
	KPREPCODES(0, kScByteIdx<>+0(SB))
	KNIB5(SI, 1)
	KPREPCODES(64, kScByteIdx<>+64(SB))
	KNIB5(SI, 2)
	KPREPCODES(128, kScByteIdx<>+128(SB))
	KNIB5(SI, 3)
	KPREPCODES(192, kScByteIdx<>+192(SB))
	KPREPEND
	KPREPSCALEMIN(SI)
	ADDQ $176, R13
	ADDQ $384, DI
	DECQ R11
	JNZ  q5kprep
	VZEROUPPER
	RET

// Q6KPREPHALF stores the 128 codes of half H of a Q6_K super-block (as Q6KHALF makes them)
// at 128H(DI) and adds Σ sc·q to Z15 (Z1 holds the int8 scales in every lane).
#define Q6KPREPHALF(R, H) \
	VMOVDQU64       (64*H)(R)(R13*1), Z13; \
	VBROADCASTI64X4 (128+32*H)(R)(R13*1), Z14; \
	VPSLLVW         Z29, Z14, Z9; \
	VPANDD          Z28, Z9, Z9; \
	VPTERNLOGD      $0xf8, Z31, Z13, Z9; \
	KPREPCODES(128*H, k6ScByteIdx<>+128*H(SB)); \
	VPSRLW          $4, Z13, Z13; \
	VPSRLVW         Z27, Z14, Z9; \
	VPANDD          Z28, Z9, Z9; \
	VPTERNLOGD      $0xf8, Z31, Z13, Z9; \
	KPREPCODES(128*H+64, k6ScByteIdx<>+128*H+64(SB))

// func prepQ6_KAVX512(dst *byte, w *byte, nb int)
TEXT ·prepQ6_KAVX512(SB), NOSPLIT, $0-24
	KPREPSETUP
	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Z28
	VMOVDQU64    q6ShiftLo<>(SB), Z29
	VMOVDQU64    q6ShiftHi<>(SB), Z27

q6kprep:
	VPXORD          Z15, Z15, Z15
	VBROADCASTI32X4 192(SI)(R13*1), Z1
	Q6KPREPHALF(SI, 0)
	Q6KPREPHALF(SI, 1)
	KPREPEND
	VPMOVSXBD       192(SI)(R13*1), Z2
	VALIGND         $1, Z2, Z16, Z3
	VPSUBD          Z3, Z2, Z2
	VMOVDQU64       Z2, 256(DI)
	VPMOVSXBW       192(SI)(R13*1), Y2
	VMOVDQU         Y2, 320(DI)
	VPBROADCASTW    208(SI)(R13*1), X2
	VCVTPH2PS       X2, X2
	VMOVSS          X2, 356(DI)
	ADDQ $210, R13
	ADDQ $384, DI
	DECQ R11
	JNZ  q6kprep
	VZEROUPPER
	RET

// func gemmK32MinAVX512(res *float32, prep *byte, tile *byte, nb, prepStride, shift int, pf *byte, pfStep int)
TEXT ·gemmK32MinAVX512(SB), NOSPLIT, $0-64
	KGEMMSETUP

gemmK32Minloop:
	KGEMMSTART(gemmK32Minpf, gemmK32Minpfdone)
	KSUB32(0)
	KSUB32(1)
	KSUB32(2)
	KSUB32(3)
	KSUB32(4)
	KSUB32(5)
	KSUB32(6)
	KSUB32(7)
	KGEMMPAIRS32
	KFLOATMIN(SI, Z4, Z8, Z12)
	KFLOATMIN(R8, Z5, Z9, Z13)
	KFLOATMIN(R9, Z6, Z10, Z14)
	KFLOATMIN(R10, Z7, Z11, Z15)
	KGEMMNEXT
	JNZ gemmK32Minloop
	KGEMMSTORE
	RET

// func gemmK16MinAVX512(res *float32, prep *byte, tile *byte, nb, prepStride, shift int, pf *byte, pfStep int)
TEXT ·gemmK16MinAVX512(SB), NOSPLIT, $0-64
	KGEMMSETUP

gemmK16Minloop:
	KGEMMSTART(gemmK16Minpf, gemmK16Minpfdone)
	KSUB16(0)
	KSUB16(1)
	KSUB16(2)
	KSUB16(3)
	KSUB16(4)
	KSUB16(5)
	KSUB16(6)
	KSUB16(7)
	KSUB16(8)
	KSUB16(9)
	KSUB16(10)
	KSUB16(11)
	KSUB16(12)
	KSUB16(13)
	KSUB16(14)
	KSUB16(15)
	KGEMMPAIRS
	KFLOATMIN(SI, Z4, Z8, Z12)
	KFLOATMIN(R8, Z5, Z9, Z13)
	KFLOATMIN(R9, Z6, Z10, Z14)
	KFLOATMIN(R10, Z7, Z11, Z15)
	KGEMMNEXT
	JNZ gemmK16Minloop
	KGEMMSTORE
	RET

// func gemmK16SignedAVX512(res *float32, prep *byte, tile *byte, nb, prepStride, shift int, pf *byte, pfStep int)
TEXT ·gemmK16SignedAVX512(SB), NOSPLIT, $0-64
	KGEMMSETUP

gemmK16Signedloop:
	KGEMMSTART(gemmK16Signedpf, gemmK16Signedpfdone)
	KSUB16(0)
	KSUB16(1)
	KSUB16(2)
	KSUB16(3)
	KSUB16(4)
	KSUB16(5)
	KSUB16(6)
	KSUB16(7)
	KSUB16(8)
	KSUB16(9)
	KSUB16(10)
	KSUB16(11)
	KSUB16(12)
	KSUB16(13)
	KSUB16(14)
	KSUB16(15)
	KGEMMPAIRS
	KFLOATSIGNED(SI, Z4, Z8, Z12)
	KFLOATSIGNED(R8, Z5, Z9, Z13)
	KFLOATSIGNED(R9, Z6, Z10, Z14)
	KFLOATSIGNED(R10, Z7, Z11, Z15)
	KGEMMNEXT
	JNZ gemmK16Signedloop
	KGEMMSTORE
	RET

// func prepQ2_KAVX512(dst *byte, w *byte, nb int)
TEXT ·prepQ2_KAVX512(SB), NOSPLIT, $0-24
	KPREPSETUP
	K2PREPSETUP

q2kprep:
	VPXORD          Z15, Z15, Z15
	VBROADCASTI32X4 (SI)(R13*1), Z1
	VPANDD          Z31, Z1, Z1
	K2PREPHALF(SI, 16, 0, KPNOHIGH, KPNOHIGH)
	K2PREPHALF(SI, 16, 1, KPNOHIGH, KPNOHIGH)
	KPREPEND
	VPMOVZXBD       (SI)(R13*1), Z2
	VPANDD          Z31, Z2, Z2
	KPREPDELTA16
	VPMOVZXBW       (SI)(R13*1), Y2
	VPSRLW          $4, Y2, Y2
	VMOVDQU         Y2, 320(DI)
	VPBROADCASTD    80(SI)(R13*1), X2
	VCVTPH2PS       X2, X2
	VMOVQ           X2, 356(DI)
	ADDQ $84, R13
	ADDQ $384, DI
	DECQ R11
	JNZ  q2kprep
	VZEROUPPER
	RET

// func prepQ3_KAVX512(dst *byte, w *byte, nb int)
TEXT ·prepQ3_KAVX512(SB), NOSPLIT, $0-24
	KPREPSETUP
	K2PREPSETUP

q3kprep:
	VPXORD          Z15, Z15, Z15
	Q3SCALEGPR(SI)
	VMOVQ           AX, X1
	VPINSRQ         $1, BX, X1, X1
	VPSUBB          X26, X1, X1
	VSHUFI64X2      $0, Z1, Z1, Z1
	VBROADCASTI64X4 (SI)(R13*1), Z13
	K2PREPHALF(SI, 32, 0, KP3HIGH0, KP3HIGH1)
	K2PREPHALF(SI, 32, 1, KP3HIGH2, KP3HIGH3)
	KPREPEND
	VPMOVSXBW       X1, Y3
	VMOVDQU         Y3, 320(DI)
	VPMOVSXBD       X1, Z2
	KPREPDELTA16
	VPBROADCASTW    108(SI)(R13*1), X2
	VCVTPH2PS       X2, X2
	VMOVSS          X2, 356(DI)
	ADDQ $110, R13
	ADDQ $384, DI
	DECQ R11
	JNZ  q3kprep
	VZEROUPPER
	RET
