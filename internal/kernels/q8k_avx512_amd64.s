//go:build amd64 && !purego

#include "textflag.h"

// QKABS makes V the magnitudes of its values, as bit patterns, with 0 for NaNs.
#define QKABS(V) \
	VCMPPS   $7, V, V, K1; \
	VPANDD.Z Z31, V, K1, V

// QKFIND goes to qkfound with BX the index of the first lane of V (values OFF..OFF+15)
// equal to the maximum in Z16, if there is one.
#define QKFIND(V, OFF) \
	VPCMPEQD Z16, V, K1; \
	KMOVW    K1, AX; \
	BSFL     AX, BX; \
	JEQ      3(PC); \
	ADDQ     $OFF, BX; \
	JMP      qkfound

// QKCODES stores the 16 codes of the values at OFF(SI) at OFF/4(DI): iscale (Z18) times
// the value, nearest_int, min(127, ·), the low byte.
#define QKCODES(OFF) \
	VMULPS  OFF(SI), Z18, Z19; \
	VADDPS  Z30, Z19, Z19; \
	VPANDD  Z29, Z19, Z19; \
	VPSUBD  Z28, Z19, Z19; \
	VPMINSD Z27, Z19, Z19; \
	VPMOVDB Z19, (OFF/4)(DI)

// QKSUMS stores the four block sums of the 64 codes at QOFF(DI) at SOFF(DI): the codes plus
// 128 (XOR 0x80) summed by eight (VPSADBW), the pairs added (VPHADDW), less 2048.
#define QKSUMS(QOFF, SOFF) \
	VPXORD   QOFF(DI), Z26, Z0; \
	VPSADBW  Z24, Z0, Z0; \
	VPMOVQW  Z0, X0; \
	VPHADDW  X0, X0, X0; \
	VPSUBW   X25, X0, X0; \
	VMOVQ    X0, SOFF(DI)

// func quantizeQ8KAVX512(x *float32, nb int, dst *byte)
//
// Q8KInput.Quantize's super-blocks (q8k.go), one per iteration, with quantizeQ8KGeneric's
// arithmetic: the largest |x| over the values that are not NaN (their bit patterns without
// the sign compared as integers), the first value of that magnitude (the lowest index whose
// lane compares equal), iscale = −127/max (VDIVSS), q = min(127, nearest_int(iscale·x)) as
// ggml's nearest_int computes it (x·iscale + 1.5·2^23, the low 23 bits less 2^22), stored as
// its low byte (VPMOVDB truncates); the block sums from the stored codes (made unsigned by
// XOR 0x80, summed by VPSADBW, less 16·128); d = 1/iscale. A super-block of zeros (or only
// NaNs) is stored as zeros.
TEXT ·quantizeQ8KAVX512(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         nb+8(FP), CX
	MOVQ         dst+16(FP), DI
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x4b400000, AX // 1.5·2^23
	VPBROADCASTD AX, Z30
	MOVL         $0x007fffff, AX
	VPBROADCASTD AX, Z29
	MOVL         $0x00400000, AX
	VPBROADCASTD AX, Z28
	MOVL         $127, AX
	VPBROADCASTD AX, Z27
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z26
	MOVL         $0x0800, AX     // 16·128
	VPBROADCASTW AX, Z25
	VPXORD       Z24, Z24, Z24
	MOVL         $0xc2fe0000, AX // −127.0
	VMOVD        AX, X23

qkloop:
	// The magnitudes, NaNs as 0, into Z0-Z15; their maximum into X16.
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VMOVUPS 256(SI), Z4
	VMOVUPS 320(SI), Z5
	VMOVUPS 384(SI), Z6
	VMOVUPS 448(SI), Z7
	VMOVUPS 512(SI), Z8
	VMOVUPS 576(SI), Z9
	VMOVUPS 640(SI), Z10
	VMOVUPS 704(SI), Z11
	VMOVUPS 768(SI), Z12
	VMOVUPS 832(SI), Z13
	VMOVUPS 896(SI), Z14
	VMOVUPS 960(SI), Z15
	QKABS(Z0)
	QKABS(Z1)
	QKABS(Z2)
	QKABS(Z3)
	QKABS(Z4)
	QKABS(Z5)
	QKABS(Z6)
	QKABS(Z7)
	QKABS(Z8)
	QKABS(Z9)
	QKABS(Z10)
	QKABS(Z11)
	QKABS(Z12)
	QKABS(Z13)
	QKABS(Z14)
	QKABS(Z15)
	VPMAXUD Z1, Z0, Z16
	VPMAXUD Z3, Z2, Z17
	VPMAXUD Z5, Z4, Z18
	VPMAXUD Z7, Z6, Z19
	VPMAXUD Z9, Z8, Z20
	VPMAXUD Z11, Z10, Z21
	VPMAXUD Z13, Z12, Z22
	VPMAXUD Z17, Z16, Z16
	VPMAXUD Z15, Z14, Z17
	VPMAXUD Z19, Z18, Z18
	VPMAXUD Z21, Z20, Z20
	VPMAXUD Z22, Z17, Z17
	VPMAXUD Z18, Z16, Z16
	VPMAXUD Z20, Z17, Z17
	VPMAXUD Z17, Z16, Z16
	VEXTRACTI64X4 $1, Z16, Y17
	VPMAXUD       Y17, Y16, Y16
	VEXTRACTI32X4 $1, Y16, X17
	VPMAXUD       X17, X16, X16
	VPSHUFD       $0x4e, X16, X17
	VPMAXUD       X17, X16, X16
	VPSHUFD       $0xb1, X16, X17
	VPMAXUD       X17, X16, X16
	VMOVD         X16, AX
	TESTL         AX, AX
	JZ            qkzero

	// The first value of that magnitude: the lowest lane equal to it.
	VPBROADCASTD X16, Z16
	XORQ         BX, BX
	QKFIND(Z0, 0)
	QKFIND(Z1, 16)
	QKFIND(Z2, 32)
	QKFIND(Z3, 48)
	QKFIND(Z4, 64)
	QKFIND(Z5, 80)
	QKFIND(Z6, 96)
	QKFIND(Z7, 112)
	QKFIND(Z8, 128)
	QKFIND(Z9, 144)
	QKFIND(Z10, 160)
	QKFIND(Z11, 176)
	QKFIND(Z12, 192)
	QKFIND(Z13, 208)
	QKFIND(Z14, 224)
	QKFIND(Z15, 240)

qkfound:
	VMOVSS       (SI)(BX*4), X17 // the extreme value
	VDIVSS       X17, X23, X17   // iscale = −127/max
	VBROADCASTSS X17, Z18
	QKCODES(0)
	QKCODES(64)
	QKCODES(128)
	QKCODES(192)
	QKCODES(256)
	QKCODES(320)
	QKCODES(384)
	QKCODES(448)
	QKCODES(512)
	QKCODES(576)
	QKCODES(640)
	QKCODES(704)
	QKCODES(768)
	QKCODES(832)
	QKCODES(896)
	QKCODES(960)
	QKSUMS(0, 256)
	QKSUMS(64, 264)
	QKSUMS(128, 272)
	QKSUMS(192, 280)
	MOVL   $0x3f800000, AX
	VMOVD  AX, X19
	VDIVSS X17, X19, X19 // d = 1/iscale
	VMOVSS X19, 288(DI)

qknext:
	ADDQ $1024, SI
	ADDQ $320, DI
	DECQ CX
	JNZ  qkloop
	VZEROUPPER
	RET

qkzero:
	VMOVDQU64 Z24, (DI)
	VMOVDQU64 Z24, 64(DI)
	VMOVDQU64 Z24, 128(DI)
	VMOVDQU64 Z24, 192(DI)
	VMOVDQU64 Z24, 256(DI)
	VMOVDQU64 Y24, 288(DI)
	JMP       qknext
