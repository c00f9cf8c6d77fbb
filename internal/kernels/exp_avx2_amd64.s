//go:build amd64 && !purego

#include "textflag.h"

// The exponentials of exp_avx512_amd64.s with AVX2 and FMA, four float64 lanes per YMM register:
// math.Exp's amd64 FMA arithmetic (src/math/exp_avx512_amd64.s), the same constants and the same
// operations in the same order, so every lane gets math.Exp's bits. The constants come
// from memory, four copies each, since sixteen YMM registers cannot hold them all. Lanes
// whose n lies outside [-1022, 1023] (math.Exp's other paths) are reported instead.

#define C4(off, bits) \
	DATA expConsts4<>+off(SB)/8, bits; \
	DATA expConsts4<>+off+8(SB)/8, bits; \
	DATA expConsts4<>+off+16(SB)/8, bits; \
	DATA expConsts4<>+off+24(SB)/8, bits

C4(0, $1.4426950408889634073599246810018920)   // log2(e)
C4(32, $0.69314718055966295651160180568695068359375) // ln 2, upper part
C4(64, $0.28235290563031577122588448175013436025525412068e-12) // ln 2, lower part
C4(96, $0.0625)
C4(128, $2.4801587301587301587e-5)
C4(160, $1.9841269841269841270e-4)
C4(192, $1.3888888888888888889e-3)
C4(224, $8.3333333333333333333e-3)
C4(256, $4.1666666666666666667e-2)
C4(288, $1.6666666666666666667e-1)
C4(320, $0.5)
C4(352, $1.0)
C4(384, $2.0)
C4(416, $0x3ff)                // exponent bias, as an int64
C4(448, $0x8000000000000000)   // float64 sign bit
DATA expConsts4<>+480(SB)/8, $0x000003ff000003ff // largest n of the plain path, four int32
DATA expConsts4<>+488(SB)/8, $0x000003ff000003ff
DATA expConsts4<>+496(SB)/8, $0xfffffc02fffffc02 // smallest (-1022)
DATA expConsts4<>+504(SB)/8, $0xfffffc02fffffc02
GLOBL expConsts4<>(SB), RODATA|NOPTR, $512

// EXP4 replaces the four float64 lanes of Y0 by their exponentials and ORs into X7 the
// lanes that need math.Exp's other paths. Y1, X3, X4 are scratch. Each line repeats the
// corresponding one of EXP8 in exp_avx512_amd64.s.
#define EXP4 \
	VMULPD       expConsts4<>+0(SB), Y0, Y1; \
	VCVTPD2DQY   Y1, X3; \
	VPCMPGTD     expConsts4<>+480(SB), X3, X4; /* n > 1023 */ \
	VPOR         X4, X7, X7; \
	VMOVDQU      expConsts4<>+496(SB), X4; \
	VPCMPGTD     X3, X4, X4;                   /* n < -1022 */ \
	VPOR         X4, X7, X7; \
	VCVTDQ2PD    X3, Y1; \
	VFNMADD231PD expConsts4<>+32(SB), Y1, Y0; \
	VFNMADD231PD expConsts4<>+64(SB), Y1, Y0; \
	VMULPD       expConsts4<>+96(SB), Y0, Y0; \
	VMOVUPD      expConsts4<>+128(SB), Y1; \
	VFMADD213PD  expConsts4<>+160(SB), Y0, Y1; \
	VFMADD213PD  expConsts4<>+192(SB), Y0, Y1; \
	VFMADD213PD  expConsts4<>+224(SB), Y0, Y1; \
	VFMADD213PD  expConsts4<>+256(SB), Y0, Y1; \
	VFMADD213PD  expConsts4<>+288(SB), Y0, Y1; \
	VFMADD213PD  expConsts4<>+320(SB), Y0, Y1; \
	VFMADD213PD  expConsts4<>+352(SB), Y0, Y1; \
	VMULPD       Y1, Y0, Y0; \
	VADDPD       expConsts4<>+384(SB), Y0, Y1; \
	VMULPD       Y1, Y0, Y0; \
	VADDPD       expConsts4<>+384(SB), Y0, Y1; \
	VMULPD       Y1, Y0, Y0; \
	VADDPD       expConsts4<>+384(SB), Y0, Y1; \
	VMULPD       Y1, Y0, Y0; \
	VADDPD       expConsts4<>+384(SB), Y0, Y1; \
	VFMADD213PD  expConsts4<>+352(SB), Y1, Y0; \
	VPMOVSXDQ    X3, Y1; \
	VPADDQ       expConsts4<>+416(SB), Y1, Y1; \
	VPSLLQ       $52, Y1, Y1; \
	VMULPD       Y1, Y0, Y0

// func expShiftedAVX2(x *float32, n int, shift float32) int
//
// expShiftedAVX512 with AVX2 and FMA: eight floats per step as two groups of four float64
// lanes, stored only when all eight are on the plain path.
TEXT ·expShiftedAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS shift+16(FP), X5
	XORQ         AX, AX
	TESTQ        CX, CX
	JZ           done

loop:
	VPXOR     X7, X7, X7
	VMOVUPS   (SI)(AX*4), X2
	VSUBPS    X5, X2, X2
	VCVTPS2PD X2, Y0
	EXP4
	VCVTPD2PSY Y0, X6
	VMOVUPS   16(SI)(AX*4), X2
	VSUBPS    X5, X2, X2
	VCVTPS2PD X2, Y0
	EXP4
	VPTEST    X7, X7
	JNZ       done
	VCVTPD2PSY Y0, X0
	VMOVUPS   X6, (SI)(AX*4)
	VMOVUPS   X0, 16(SI)(AX*4)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JNE       loop

done:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func swigluAVX2(gate, up *float32, n int) int
//
// swigluAVX512 with AVX2 and FMA, eight elements per step as two groups of four.
TEXT ·swigluAVX2(SB), NOSPLIT, $0-32
	MOVQ  gate+0(FP), SI
	MOVQ  up+8(FP), DI
	MOVQ  n+16(FP), CX
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    sdone

sloop:
	VPXOR      X7, X7, X7
	VMOVUPS    (SI)(AX*4), X2
	VCVTPS2PD  X2, Y5                      // g
	VXORPD     expConsts4<>+448(SB), Y5, Y0 // -g
	EXP4
	VADDPD     expConsts4<>+352(SB), Y0, Y0 // 1 + e
	VDIVPD     Y0, Y5, Y6                   // g / (1 + e)
	VCVTPD2PSY Y6, X6
	VMOVUPS    16(SI)(AX*4), X2
	VCVTPS2PD  X2, Y5
	VXORPD     expConsts4<>+448(SB), Y5, Y0
	EXP4
	VPTEST     X7, X7
	JNZ        sdone
	VADDPD     expConsts4<>+352(SB), Y0, Y0
	VDIVPD     Y0, Y5, Y0
	VCVTPD2PSY Y0, X0
	VMULPS     (DI)(AX*4), X6, X6 // s · up[i]
	VMULPS     16(DI)(AX*4), X0, X0
	VMOVUPS    X6, (SI)(AX*4)
	VMOVUPS    X0, 16(SI)(AX*4)
	ADDQ       $8, AX
	CMPQ       AX, CX
	JNE        sloop

sdone:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET
