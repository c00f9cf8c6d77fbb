//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// PAIR joins the eight floats at A into the low half and the eight floats at B into the
// high half of Z (whose low 256 bits are Y).
#define PAIR(A, B, Y, Z) \
	VMOVUPS      A, Y; \
	VINSERTF64X4 $1, B, Z, Z

// func dot4x4AVX512(out *float32, outStride int, w, x *float32, n int)
//
// Sixteen dot products in eight ZMM registers, two per register: Zk holds the eight lanes
// of (row k, input 0) in its low half and of (row k, input 1) in its high half, Z(k+4) the
// same for inputs 2 and 3. Each block of eight weights is broadcast to both halves, each
// pair of input blocks is joined into one ZMM, and every half then goes through exactly
// Dot's arithmetic: VMULPS then VADDPS (the two halves never interact), the VMASKMOVPS
// tail, and REDUCE8 on each half once the halves are split apart.
//
// Weight rows at SI, R8, R9, R10; inputs at DI, R11, R12, DX; AX is the byte offset of the
// current block of eight, BX the byte length of the whole blocks. The output pointer and
// stride are loaded only at the end, when registers are free again. Only Z0..Z14 are used,
// so the VEX-encoded macros reach every register (a VEX write to Yn zeroes the upper half
// of Zn, which VXORPS relies on to clear the accumulators).
TEXT ·dot4x4AVX512(SB), NOSPLIT, $0-40
	MOVQ   w+16(FP), SI
	MOVQ   x+24(FP), DI
	MOVQ   n+32(FP), CX
	LEAQ   (SI)(CX*4), R8
	LEAQ   (R8)(CX*4), R9
	LEAQ   (R9)(CX*4), R10
	LEAQ   (DI)(CX*4), R11
	LEAQ   (R11)(CX*4), R12
	LEAQ   (R12)(CX*4), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-8, BX
	SHLQ   $2, BX
	TESTQ  BX, BX
	JZ     tail

loop:
	PAIR((DI)(AX*1), (R11)(AX*1), Y8, Z8)
	PAIR((R12)(AX*1), (DX)(AX*1), Y9, Z9)
	VBROADCASTF64X4 (SI)(AX*1), Z10
	MULADD(Z8, Z10, Z11, Z0)
	MULADD(Z9, Z10, Z12, Z4)
	VBROADCASTF64X4 (R8)(AX*1), Z10
	MULADD(Z8, Z10, Z11, Z1)
	MULADD(Z9, Z10, Z12, Z5)
	VBROADCASTF64X4 (R9)(AX*1), Z10
	MULADD(Z8, Z10, Z11, Z2)
	MULADD(Z9, Z10, Z12, Z6)
	VBROADCASTF64X4 (R10)(AX*1), Z10
	MULADD(Z8, Z10, Z11, Z3)
	MULADD(Z9, Z10, Z12, Z7)
	ADDQ            $32, AX
	CMPQ            AX, BX
	JNE             loop

tail:
	// As in dotAVXAsm: masked loads give +0 in the lanes past the end; the blocks are then
	// paired and broadcast as in the loop.
	ANDQ         $7, CX
	JZ           reduce
	TAILMASK(CX, BX, R13, Y13)
	VMASKMOVPS   (DI)(AX*1), Y13, Y8
	VMASKMOVPS   (R11)(AX*1), Y13, Y14
	VINSERTF64X4 $1, Y14, Z8, Z8
	VMASKMOVPS   (R12)(AX*1), Y13, Y9
	VMASKMOVPS   (DX)(AX*1), Y13, Y14
	VINSERTF64X4 $1, Y14, Z9, Z9
	VMASKMOVPS   (SI)(AX*1), Y13, Y10
	VINSERTF64X4 $1, Y10, Z10, Z10
	MULADD(Z8, Z10, Z11, Z0)
	MULADD(Z9, Z10, Z12, Z4)
	VMASKMOVPS   (R8)(AX*1), Y13, Y10
	VINSERTF64X4 $1, Y10, Z10, Z10
	MULADD(Z8, Z10, Z11, Z1)
	MULADD(Z9, Z10, Z12, Z5)
	VMASKMOVPS   (R9)(AX*1), Y13, Y10
	VINSERTF64X4 $1, Y10, Z10, Z10
	MULADD(Z8, Z10, Z11, Z2)
	MULADD(Z9, Z10, Z12, Z6)
	VMASKMOVPS   (R10)(AX*1), Y13, Y10
	VINSERTF64X4 $1, Y10, Z10, Z10
	MULADD(Z8, Z10, Z11, Z3)
	MULADD(Z9, Z10, Z12, Z7)

reduce:
	// Row k of input j goes to out[j*outStride+k]: DX points at input 0's outputs, R12 at
	// input 2's, R13 is the stride in bytes.
	MOVQ          out+0(FP), DX
	MOVQ          outStride+8(FP), R13
	SHLQ          $2, R13
	LEAQ          (DX)(R13*2), R12
	VEXTRACTF64X4 $1, Z0, Y8
	VEXTRACTF64X4 $1, Z1, Y9
	VEXTRACTF64X4 $1, Z2, Y10
	VEXTRACTF64X4 $1, Z3, Y11
	REDUCE8(Y0, X0, X12)
	REDUCE8(Y1, X1, X12)
	REDUCE8(Y2, X2, X12)
	REDUCE8(Y3, X3, X12)
	REDUCE8(Y8, X8, X12)
	REDUCE8(Y9, X9, X12)
	REDUCE8(Y10, X10, X12)
	REDUCE8(Y11, X11, X12)
	VMOVSS        X0, (DX)
	VMOVSS        X1, 4(DX)
	VMOVSS        X2, 8(DX)
	VMOVSS        X3, 12(DX)
	VMOVSS        X8, (DX)(R13*1)
	VMOVSS        X9, 4(DX)(R13*1)
	VMOVSS        X10, 8(DX)(R13*1)
	VMOVSS        X11, 12(DX)(R13*1)
	VEXTRACTF64X4 $1, Z4, Y8
	VEXTRACTF64X4 $1, Z5, Y9
	VEXTRACTF64X4 $1, Z6, Y10
	VEXTRACTF64X4 $1, Z7, Y11
	REDUCE8(Y4, X4, X12)
	REDUCE8(Y5, X5, X12)
	REDUCE8(Y6, X6, X12)
	REDUCE8(Y7, X7, X12)
	REDUCE8(Y8, X8, X12)
	REDUCE8(Y9, X9, X12)
	REDUCE8(Y10, X10, X12)
	REDUCE8(Y11, X11, X12)
	VMOVSS        X4, (R12)
	VMOVSS        X5, 4(R12)
	VMOVSS        X6, 8(R12)
	VMOVSS        X7, 12(R12)
	VMOVSS        X8, (R12)(R13*1)
	VMOVSS        X9, 4(R12)(R13*1)
	VMOVSS        X10, 8(R12)(R13*1)
	VMOVSS        X11, 12(R12)(R13*1)
	VZEROUPPER
	RET

// func packPairs8AVX512(dst, x *float32, n int)
//
// Packs eight input vectors x_j = x[j·n:(j+1)·n] for dot4x8PackedAVX512: for every block
// of eight elements b, dst[64b+16p : 64b+16p+8] = x_2p's block and dst[64b+16p+8 :
// 64b+16p+16] = x_(2p+1)'s, p = 0..3 (256 bytes per block). n must be a positive multiple
// of 8. The inputs are n floats apart, so one stride register R9 (n·4 bytes) reaches them
// all: inputs 0, 1, 2, 4 at (DI), (DI)(R9*1), (DI)(R9*2), (DI)(R9*4), inputs 3, 5, 7 at
// (R11), (R11)(R9*2), (R11)(R9*4), input 6 at (R12).
TEXT ·packPairs8AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ CX, R9
	SHLQ $2, R9
	LEAQ (DI)(R9*2), R11
	ADDQ R9, R11
	LEAQ (R11)(R9*2), R12
	ADDQ R9, R12
	SHRQ $3, CX

looppack:
	VMOVUPS      (DI), Y0
	VINSERTF64X4 $1, (DI)(R9*1), Z0, Z0
	VMOVUPS      (DI)(R9*2), Y1
	VINSERTF64X4 $1, (R11), Z1, Z1
	VMOVUPS      (DI)(R9*4), Y2
	VINSERTF64X4 $1, (R11)(R9*2), Z2, Z2
	VMOVUPS      (R12), Y3
	VINSERTF64X4 $1, (R11)(R9*4), Z3, Z3
	VMOVUPS      Z0, (SI)
	VMOVUPS      Z1, 64(SI)
	VMOVUPS      Z2, 128(SI)
	VMOVUPS      Z3, 192(SI)
	ADDQ         $256, SI
	ADDQ         $32, DI
	ADDQ         $32, R11
	ADDQ         $32, R12
	DECQ         CX
	JNZ          looppack
	VZEROUPPER
	RET
