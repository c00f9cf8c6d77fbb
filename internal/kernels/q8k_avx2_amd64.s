//go:build amd64 && !purego

#include "textflag.h"

// QKABS2 makes V the magnitudes of its values, as bit patterns, with 0 for NaNs (M is
// scratch: the lanes that are not NaN).
#define QKABS2(V, M) \
	VCMPPS $7, V, V, M; \
	VPAND  Y15, V, V; \
	VPAND  M, V, V

// QKCODE2 leaves in V the eight codes of the values at OFF(SI)(BX*1), as bytes in dwords:
// iscale (Y10) times the value, nearest_int, min(127, ·), the low byte.
#define QKCODE2(OFF, V) \
	VMULPS  OFF(SI)(BX*1), Y10, V; \
	VADDPS  Y14, V, V; \
	VPAND   Y13, V, V; \
	VPSUBD  Y12, V, V; \
	VPMINSD Y11, V, V; \
	VPAND   Y9, V, V

// QKSAD2 leaves in V the sums of each eight of the 32 codes at OFF(DI), made unsigned by XOR
// 0x80 (Y13), in its four quadwords (VPSADBW against zero, Y12).
#define QKSAD2(OFF, V) \
	VPXOR   OFF(DI), Y13, V; \
	VPSADBW Y12, V, V

// func quantizeQ8KAVX2(x *float32, nb int, dst *byte)
//
// quantizeQ8KAVX512 with AVX2: the same arithmetic and the same bytes. A first pass finds
// the largest magnitude over the values that are not NaN (bit patterns without the sign,
// VPMAXUD), a second the first value of that magnitude (VPCMPEQD, VMOVMSKPS, BSF); iscale =
// −127/max; the codes min(127, nearest_int(iscale·x)) keep their low byte (AND 0xff, then
// VPACKUSDW and VPACKUSWB, which saturate nothing, and VPERMD to put the dwords back in
// order); the block sums from the stored codes (XOR 0x80, VPSADBW, VPHADDD, less 16·128),
// packed to int16; d = 1/iscale. A super-block of zeros (or only NaNs) is stored as zeros.
TEXT ·quantizeQ8KAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ dst+16(FP), DI

qkloop2:
	MOVL         $0x7fffffff, AX
	MOVD         AX, X15
	VPBROADCASTD X15, Y15

	// The largest magnitude, NaNs as 0, into X0.
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ  BX, BX

qkmax2:
	VMOVUPS (SI)(BX*1), Y2
	VMOVUPS 32(SI)(BX*1), Y3
	QKABS2(Y2, Y4)
	QKABS2(Y3, Y5)
	VPMAXUD Y2, Y0, Y0
	VPMAXUD Y3, Y1, Y1
	ADDQ    $64, BX
	CMPQ    BX, $1024
	JNE     qkmax2
	VPMAXUD      Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMAXUD      X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPMAXUD      X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPMAXUD      X1, X0, X0
	VMOVD        X0, AX
	TESTL        AX, AX
	JZ           qkzero2

	// The first value of that magnitude: the lowest lane equal to it.
	VPBROADCASTD X0, Y6
	XORQ         BX, BX

qkfind2:
	VMOVUPS   (SI)(BX*1), Y2
	QKABS2(Y2, Y4)
	VPCMPEQD  Y6, Y2, Y2
	VMOVMSKPS Y2, AX
	TESTL     AX, AX
	JNZ       qkfound2
	ADDQ      $32, BX
	JMP       qkfind2

qkfound2:
	BSFL   AX, AX
	SHRQ   $2, BX
	ADDQ   AX, BX
	VMOVSS (SI)(BX*4), X7 // the extreme value
	MOVL   $0xc2fe0000, AX // −127.0
	VMOVD  AX, X8
	VDIVSS X7, X8, X7     // iscale = −127/max

	// The codes, 32 a step, stored in order.
	VBROADCASTSS X7, Y10
	MOVL         $0x4b400000, AX // 1.5·2^23
	MOVD         AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x007fffff, AX
	MOVD         AX, X13
	VPBROADCASTD X13, Y13
	MOVL         $0x00400000, AX
	MOVD         AX, X12
	VPBROADCASTD X12, Y12
	MOVL         $127, AX
	MOVD         AX, X11
	VPBROADCASTD X11, Y11
	MOVL         $0xff, AX
	MOVD         AX, X9
	VPBROADCASTD X9, Y9
	VMOVDQU      qkOrder<>(SB), Y8
	XORQ         BX, BX
	MOVQ         DI, DX

qkcodes2:
	QKCODE2(0, Y0)
	QKCODE2(32, Y1)
	QKCODE2(64, Y2)
	QKCODE2(96, Y3)
	VPACKUSDW Y1, Y0, Y0
	VPACKUSDW Y3, Y2, Y2
	VPACKUSWB Y2, Y0, Y0
	VPERMD    Y0, Y8, Y0
	VMOVDQU   Y0, (DX)
	ADDQ      $32, DX
	SUBQ      $-128, BX
	CMPQ      BX, $1024
	JNE       qkcodes2

	// The sums of each sixteen codes: P = [S0 S2 S4 S6 | S1 S3 S5 S7] by VPHADDD, put in
	// order by VPERMD, the same for S8..S15, less 2048, packed to int16.
	MOVL         $0x80808080, AX
	MOVD         AX, X13
	VPBROADCASTD X13, Y13
	VPXOR        Y12, Y12, Y12
	QKSAD2(0, Y0)
	QKSAD2(32, Y1)
	QKSAD2(64, Y2)
	QKSAD2(96, Y3)
	QKSAD2(128, Y4)
	QKSAD2(160, Y5)
	QKSAD2(192, Y6)
	QKSAD2(224, Y7)
	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VPHADDD      Y5, Y4, Y4
	VPHADDD      Y7, Y6, Y6
	VPHADDD      Y6, Y4, Y4
	VPERMD       Y0, Y8, Y0
	VPERMD       Y4, Y8, Y4
	MOVL         $2048, AX // 16·128
	MOVD         AX, X1
	VPBROADCASTD X1, Y1
	VPSUBD       Y1, Y0, Y0
	VPSUBD       Y1, Y4, Y4
	VPACKSSDW    Y4, Y0, Y0
	VPERMQ       $0xd8, Y0, Y0
	VMOVDQU      Y0, 256(DI)
	MOVL         $0x3f800000, AX
	VMOVD        AX, X1
	VDIVSS       X10, X1, X1 // d = 1/iscale (iscale is lane 0 of Y10)
	VMOVSS       X1, 288(DI)

qknext2:
	ADDQ $1024, SI
	ADDQ $320, DI
	DECQ CX
	JNZ  qkloop2
	VZEROUPPER
	RET

qkzero2:
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, (DI)
	VMOVDQU Y0, 32(DI)
	VMOVDQU Y0, 64(DI)
	VMOVDQU Y0, 96(DI)
	VMOVDQU Y0, 128(DI)
	VMOVDQU Y0, 160(DI)
	VMOVDQU Y0, 192(DI)
	VMOVDQU Y0, 224(DI)
	VMOVDQU Y0, 256(DI)
	VMOVDQU Y0, 288(DI)
	JMP     qknext2

// qkOrder is VPERMD's index that puts the dwords d0 d4 d1 d5 d2 d6 d3 d7 of a pack of four
// registers (or of two VPHADDD rounds) back in order.
DATA qkOrder<>+0(SB)/4, $0
DATA qkOrder<>+4(SB)/4, $4
DATA qkOrder<>+8(SB)/4, $1
DATA qkOrder<>+12(SB)/4, $5
DATA qkOrder<>+16(SB)/4, $2
DATA qkOrder<>+20(SB)/4, $6
DATA qkOrder<>+24(SB)/4, $3
DATA qkOrder<>+28(SB)/4, $7
GLOBL qkOrder<>(SB), RODATA|NOPTR, $32
