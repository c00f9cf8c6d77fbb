//go:build amd64 && !purego

#include "textflag.h"
#include "nextrow_amd64.h"

// Q8DECODEARGS loads the arguments both decoders share: dst in DI, src in SI, nb in BX,
// stride in DX, rows in R8, next in R10, and the bytes of a row (34·nb) in R12.
#define Q8DECODEARGS \
	MOVQ  dst+0(FP), DI; \
	MOVQ  src+8(FP), SI; \
	MOVQ  nb+16(FP), BX; \
	MOVQ  stride+24(FP), DX; \
	MOVQ  rows+32(FP), R8; \
	MOVQ  next+40(FP), R10; \
	MOVQ  BX, R12; \
	IMULQ $34, R12

// func decodeQ8_0StridedAVX2Asm(dst *float32, src *byte, nb, stride, rows, next int)
//
// For each of rows rows: for each of its nb blocks of 34 bytes, the fp16 scale widened to
// eight lanes (VPBROADCASTW, VCVTPH2PS: exact), then four groups of eight int8 values
// widened to float32 (VPMOVSXBD, VCVTDQ2PS: exact) and multiplied by it (VMULPS, one
// rounding, as float32(q)*d in Go); then src moves on by stride bytes, dst continuously.
// With next ≠ 0 it first asks for the row's 34·nb bytes next bytes further into L2
// (NEXTROW).
TEXT ·decodeQ8_0StridedAVX2Asm(SB), NOSPLIT, $0-48
	Q8DECODEARGS

row:
	NEXTROW(pfrow, pfdone)
	MOVQ SI, R9
	MOVQ BX, CX

block:
	VPBROADCASTW (R9), X1
	VCVTPH2PS    X1, Y1
	VPMOVSXBD    2(R9), Y0
	VPMOVSXBD    10(R9), Y2
	VPMOVSXBD    18(R9), Y3
	VPMOVSXBD    26(R9), Y4
	VCVTDQ2PS    Y0, Y0
	VCVTDQ2PS    Y2, Y2
	VCVTDQ2PS    Y3, Y3
	VCVTDQ2PS    Y4, Y4
	VMULPS       Y1, Y0, Y0
	VMULPS       Y1, Y2, Y2
	VMULPS       Y1, Y3, Y3
	VMULPS       Y1, Y4, Y4
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y2, 32(DI)
	VMOVUPS      Y3, 64(DI)
	VMOVUPS      Y4, 96(DI)
	ADDQ         $34, R9
	ADDQ         $128, DI
	DECQ         CX
	JNZ          block
	ADDQ         DX, SI
	DECQ         R8
	JNZ          row
	VZEROUPPER
	RET

// func decodeQ8_0StridedAVX512Asm(dst *float32, src *byte, nb, stride, rows, next int, table *float32)
//
// decodeQ8_0StridedAVX2Asm in 512-bit registers: per block the scale looked up in table
// (half.F16Table: exact, as VCVTPH2PS) and broadcast by the load, then two groups of 16
// int8 values widened (VPMOVSXBD, VCVTDQ2PS: exact) and multiplied by it: ten operations a
// block where the AVX2 kernel takes eighteen.
TEXT ·decodeQ8_0StridedAVX512Asm(SB), NOSPLIT, $0-56
	Q8DECODEARGS
	MOVQ table+48(FP), R15

row512:
	NEXTROW(pfrow512, pfdone512)
	MOVQ SI, R9
	MOVQ BX, CX

block512:
	MOVWLZX      (R9), AX
	VBROADCASTSS (R15)(AX*4), Z1
	VPMOVSXBD    2(R9), Z0
	VPMOVSXBD    18(R9), Z2
	VCVTDQ2PS    Z0, Z0
	VCVTDQ2PS    Z2, Z2
	VMULPS       Z1, Z0, Z0
	VMULPS       Z1, Z2, Z2
	VMOVUPS      Z0, (DI)
	VMOVUPS      Z2, 64(DI)
	ADDQ         $34, R9
	ADDQ         $128, DI
	DECQ         CX
	JNZ          block512
	ADDQ         DX, SI
	DECQ         R8
	JNZ          row512
	VZEROUPPER
	RET
