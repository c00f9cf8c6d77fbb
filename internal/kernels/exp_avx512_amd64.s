//go:build amd64 && !purego

#include "textflag.h"

// The exponential of eight float64 lanes, computed exactly as the Go runtime's math.Exp
// computes one on amd64 CPUs with FMA (src/math/exp_avx512_amd64.s, its avxfma path): the same
// constants, the same operations in the same order, each rounded the same way, so every
// lane gets math.Exp's bits. That code is a simplified version of SLEEF's exp (Naoki
// Shibata, "Efficient evaluation methods of elementary functions suitable for SIMD
// computation", ISC'10): x = n·ln2 + r with n = round(x·log2 e), r reduced by 16, a Taylor
// polynomial, four squarings in the form y·(y+2), then a scaling by 2^n. Lanes whose n
// lies outside [-1022, 1023] (math.Exp's underflow, subnormal, overflow, NaN and infinity
// paths, none of which is vectorised here) are reported in a mask instead.

DATA expConsts<>+0(SB)/8, $1.4426950408889634073599246810018920 // log2(e)
DATA expConsts<>+8(SB)/8, $0.69314718055966295651160180568695068359375 // ln 2, upper part
DATA expConsts<>+16(SB)/8, $0.28235290563031577122588448175013436025525412068e-12 // ln 2, lower part
DATA expConsts<>+24(SB)/8, $0.0625
DATA expConsts<>+32(SB)/8, $2.4801587301587301587e-5
DATA expConsts<>+40(SB)/8, $1.9841269841269841270e-4
DATA expConsts<>+48(SB)/8, $1.3888888888888888889e-3
DATA expConsts<>+56(SB)/8, $8.3333333333333333333e-3
DATA expConsts<>+64(SB)/8, $4.1666666666666666667e-2
DATA expConsts<>+72(SB)/8, $1.6666666666666666667e-1
DATA expConsts<>+80(SB)/8, $0.5
DATA expConsts<>+88(SB)/8, $1.0
DATA expConsts<>+96(SB)/8, $2.0
DATA expConsts<>+104(SB)/8, $0x3ff          // exponent bias, as an int64
DATA expConsts<>+112(SB)/4, $1023           // largest n of the plain path, int32
DATA expConsts<>+116(SB)/4, $-1022          // smallest
DATA expConsts<>+120(SB)/8, $0x8000000000000000 // float64 sign bit
GLOBL expConsts<>(SB), RODATA|NOPTR, $128

// EXPCONSTS broadcasts the constants into Z16..Z29 (Z30, Z31: the int32 bounds in their
// low lanes).
#define EXPCONSTS \
	VBROADCASTSD expConsts<>+0(SB), Z16; \
	VBROADCASTSD expConsts<>+8(SB), Z17; \
	VBROADCASTSD expConsts<>+16(SB), Z18; \
	VBROADCASTSD expConsts<>+24(SB), Z19; \
	VBROADCASTSD expConsts<>+32(SB), Z20; \
	VBROADCASTSD expConsts<>+40(SB), Z21; \
	VBROADCASTSD expConsts<>+48(SB), Z22; \
	VBROADCASTSD expConsts<>+56(SB), Z23; \
	VBROADCASTSD expConsts<>+64(SB), Z24; \
	VBROADCASTSD expConsts<>+72(SB), Z25; \
	VBROADCASTSD expConsts<>+80(SB), Z26; \
	VBROADCASTSD expConsts<>+88(SB), Z27; \
	VBROADCASTSD expConsts<>+96(SB), Z28; \
	VPBROADCASTQ expConsts<>+104(SB), Z29; \
	VPBROADCASTD expConsts<>+112(SB), Y30; \
	VPBROADCASTD expConsts<>+116(SB), Y31

// EXP8(X, T, N, K, KT) replaces the eight float64 lanes of X by their exponentials and sets K
// to the lanes that need math.Exp's other paths. T (ZMM), N (YMM) and KT are scratch. Two
// calls on different registers are two independent chains (expShiftedAVX512 runs two side
// by side). The comments give the
// scalar instructions of exp_avx512_amd64.s that each line repeats.
#define EXP8(X, T, N, K, KT) \
	VMULPD       X, Z16, T;  /* MOVSD $LOG2E, X1; MULSD X0, X1 */ \
	VCVTPD2DQ    T, N;       /* CVTSD2SL X1, BX */ \
	VPCMPD       $6, Y30, N, K; /* n > 1023 */ \
	VPCMPD       $1, Y31, N, KT; /* n < -1022 */ \
	KORB         KT, K, K; \
	VCVTDQ2PD    N, T;       /* CVTSL2SD BX, X1 */ \
	VFNMADD231PD Z17, T, X;  /* VFNMADD231SD X2(LN2U), X1, X0 */ \
	VFNMADD231PD Z18, T, X;  /* VFNMADD231SD X2(LN2L), X1, X0 */ \
	VMULPD       Z19, X, X;  /* MULSD $0.0625, X0 */ \
	VMOVAPD      Z20, T;      /* MOVSD exprodata+64, X1 */ \
	VFMADD213PD  Z21, X, T;  /* VFMADD213SD exprodata+56, X0, X1 */ \
	VFMADD213PD  Z22, X, T; \
	VFMADD213PD  Z23, X, T; \
	VFMADD213PD  Z24, X, T; \
	VFMADD213PD  Z25, X, T; \
	VFMADD213PD  Z26, X, T; \
	VFMADD213PD  Z27, X, T; \
	VMULPD       T, X, X;   /* MULSD X1, X0 */ \
	VADDPD       Z28, X, T;  /* VADDSD exprodata+16, X0, X1 */ \
	VMULPD       T, X, X; \
	VADDPD       Z28, X, T; \
	VMULPD       T, X, X; \
	VADDPD       Z28, X, T; \
	VMULPD       T, X, X; \
	VADDPD       Z28, X, T; \
	VFMADD213PD  Z27, T, X;  /* VFMADD213SD exprodata+8, X1, X0 */ \
	VPMOVSXDQ    N, T;       /* ldexp: ADDL $0x3FF, BX; SHLQ $52, BX; MOVQ BX, X1 */ \
	VPADDQ       Z29, T, T; \
	VPSLLQ       $52, T, T; \
	VMULPD       T, X, X    /* MULSD X1, X0 */

// func expShiftedAVX512(x *float32, n int, shift float32) int
//
// x[i] = float32(math.Exp(float64(x[i] - shift))) for the n (a multiple of 8) floats at x,
// eight at a time, stopping before the first eight with a lane outside the plain path;
// returns how many it did.
TEXT ·expShiftedAVX512(SB), NOSPLIT, $0-32
	EXPCONSTS
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS shift+16(FP), Y5
	XORQ         AX, AX
	TESTQ        CX, CX
	JZ           done

	MOVQ      CX, DX
	ANDQ      $-16, DX        // the sixteens: two chains side by side
	JZ        loop

loop16:
	VMOVUPS   (SI)(AX*4), Y2
	VSUBPS    Y5, Y2, Y2      // x[i] - shift, the first eight
	VCVTPS2PD Y2, Z0
	VMOVUPS   32(SI)(AX*4), Y9
	VSUBPS    Y5, Y9, Y9      // the second eight
	VCVTPS2PD Y9, Z6
	EXP8(Z0, Z1, Y3, K1, K2)
	EXP8(Z6, Z7, Y8, K3, K4)
	KORTESTB  K1, K1
	JNZ       done
	VCVTPD2PS Z0, Y0
	VMOVUPS   Y0, (SI)(AX*4)
	ADDQ      $8, AX
	KORTESTB  K3, K3
	JNZ       done
	VCVTPD2PS Z6, Y6
	VMOVUPS   Y6, (SI)(AX*4)
	ADDQ      $8, AX
	CMPQ      AX, DX
	JNE       loop16
	CMPQ      AX, CX
	JEQ       done

loop:
	VMOVUPS   (SI)(AX*4), Y2
	VSUBPS    Y5, Y2, Y2      // x[i] - shift
	VCVTPS2PD Y2, Z0
	EXP8(Z0, Z1, Y3, K1, K2)
	KORTESTB  K1, K1
	JNZ       done
	VCVTPD2PS Z0, Y0
	VMOVUPS   Y0, (SI)(AX*4)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JNE       loop

done:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func swigluAVX512(gate, up *float32, n int) int
//
// gate[i] = float32(float64(g) / (1 + math.Exp(-float64(g)))) · up[i], g = gate[i], for the
// n (a multiple of 8) elements, eight at a time, stopping before the first eight with a
// lane outside exp's plain path; returns how many it did.
TEXT ·swigluAVX512(SB), NOSPLIT, $0-32
	EXPCONSTS
	VPBROADCASTQ expConsts<>+120(SB), Z4
	MOVQ  gate+0(FP), SI
	MOVQ  up+8(FP), DI
	MOVQ  n+16(FP), CX
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    sdone

sloop:
	VMOVUPS   (SI)(AX*4), Y2
	VCVTPS2PD Y2, Z5          // g
	VPXORQ    Z4, Z5, Z0      // -g
	EXP8(Z0, Z1, Y3, K1, K2)
	KORTESTB  K1, K1
	JNZ       sdone
	VADDPD    Z0, Z27, Z0     // 1 + e
	VDIVPD    Z0, Z5, Z6      // g / (1 + e)
	VCVTPD2PS Z6, Y6
	VMULPS    (DI)(AX*4), Y6, Y6 // s · up[i]
	VMOVUPS   Y6, (SI)(AX*4)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JNE       sloop

sdone:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET
