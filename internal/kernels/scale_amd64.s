//go:build amd64 && !purego

#include "textflag.h"

// func scaleAVXAsm(x *float32, s float32, n int)
//
// x at DI, s broadcast in Y0, CX = n·4 bytes, AX the offset; four YMM a step while 32
// floats remain, then one. The element is the first factor, as in Go's x[i] *= s (which
// NaN comes out when both are NaNs).
TEXT ·scaleAVXAsm(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), DI
	VBROADCASTSS s+8(FP), Y0
	MOVQ         n+16(FP), CX
	SHLQ         $2, CX
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-128, DX
	JZ           scale8

scale32:
	VMOVUPS (DI)(AX*1), Y1
	VMOVUPS 32(DI)(AX*1), Y2
	VMOVUPS 64(DI)(AX*1), Y3
	VMOVUPS 96(DI)(AX*1), Y4
	VMULPS  Y0, Y1, Y1
	VMULPS  Y0, Y2, Y2
	VMULPS  Y0, Y3, Y3
	VMULPS  Y0, Y4, Y4
	VMOVUPS Y1, (DI)(AX*1)
	VMOVUPS Y2, 32(DI)(AX*1)
	VMOVUPS Y3, 64(DI)(AX*1)
	VMOVUPS Y4, 96(DI)(AX*1)
	ADDQ    $128, AX
	CMPQ    AX, DX
	JNE     scale32

scale8:
	CMPQ AX, CX
	JEQ  scaledone

scale8loop:
	VMOVUPS (DI)(AX*1), Y1
	VMULPS  Y0, Y1, Y1
	VMOVUPS Y1, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JNE     scale8loop

scaledone:
	VZEROUPPER
	RET

// func maxLanesAVXAsm(lanes *[8]float32, x *float32, n int)
//
// Four sets of lanes (Y0-Y3, all from x[0]) take the groups in turn, then fold into Y0 in
// order; each step is VMAXPS ACC, V, ACC in Go's order, Intel's max(V, ACC): V when V >
// ACC, else ACC (a NaN V, or an equal one, keeps ACC).
TEXT ·maxLanesAVXAsm(SB), NOSPLIT, $0-24
	MOVQ         lanes+0(FP), R8
	MOVQ         x+8(FP), DI
	MOVQ         n+16(FP), CX
	SHLQ         $2, CX
	VBROADCASTSS (DI), Y0
	VMOVAPS      Y0, Y1
	VMOVAPS      Y0, Y2
	VMOVAPS      Y0, Y3
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-128, DX
	JZ           max8

max32:
	VMOVUPS (DI)(AX*1), Y4
	VMOVUPS 32(DI)(AX*1), Y5
	VMOVUPS 64(DI)(AX*1), Y6
	VMOVUPS 96(DI)(AX*1), Y7
	VMAXPS  Y0, Y4, Y0
	VMAXPS  Y1, Y5, Y1
	VMAXPS  Y2, Y6, Y2
	VMAXPS  Y3, Y7, Y3
	ADDQ    $128, AX
	CMPQ    AX, DX
	JNE     max32

max8:
	CMPQ AX, CX
	JEQ  maxfold

max8loop:
	VMOVUPS (DI)(AX*1), Y4
	VMAXPS  Y0, Y4, Y0
	ADDQ    $32, AX
	CMPQ    AX, CX
	JNE     max8loop

maxfold:
	VMAXPS  Y0, Y1, Y0
	VMAXPS  Y0, Y2, Y0
	VMAXPS  Y0, Y3, Y0
	VMOVUPS Y0, (R8)
	VZEROUPPER
	RET
