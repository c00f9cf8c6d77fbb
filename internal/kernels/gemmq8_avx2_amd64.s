//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The batched Q8_0 × Q8_0 product (gemmq8_amd64.go) with AVX2: one weight row against four
// quantized input vectors, DotQ8_0Q8's arithmetic lane for lane, each (row, input) in two
// YMM accumulators (even blocks, odd blocks: lanes 0-7 and 8-15 of the definition). Before
// the row's blocks, a first pass writes the scale products s = dw·dx of every block and
// input (exact in float32) to a table, four to a block, eight with one multiply; the second
// pass then takes each s with a broadcast load instead of a multiply of its own. Per block
// of the row, |w| is prepared once for the four inputs; for each input VPSIGNB moves the
// weights' signs onto its values, VPMADDUBSW (|w| unsigned times the signed values, pairs:
// at most 2·128·127, no saturation) and VPMADDWD with ones give the exact sums of four
// products per lane, then float32(float32(p)·s) is added. The inputs' values are read from
// packQ8Vector's layout (at 64·j + 32·(b mod 2) of each 768-byte pair; the odd last block's
// at 32·j), their scales from Q8Batch's four to a block.

// Q8BLOCKAVX2 adds the block at O(SI) of the row to ACC0..ACC3 (inputs 0..3), the inputs'
// values at XO(DI) + XS·j and the scale products at TO(DX) + 4·j.
#define Q8BLOCKAVX2(O, XO, XS, TO, ACC0, ACC1, ACC2, ACC3) \
	VMOVDQU O+2(SI), Y9; \
	VPABSB  Y9, Y8; \
	Q8INAVX2(XO, TO, ACC0); \
	Q8INAVX2(XO+XS, TO+4, ACC1); \
	Q8INAVX2(XO+2*XS, TO+8, ACC2); \
	Q8INAVX2(XO+3*XS, TO+12, ACC3)

// Q8INAVX2 is one input's part of Q8BLOCKAVX2 (Y8 = |w|, Y9 = w, Y11 = int16 ones).
#define Q8INAVX2(XO, TO, ACC) \
	VMOVDQU      XO(DI), Y12; \
	VPSIGNB      Y9, Y12, Y12; \
	VPMADDUBSW   Y12, Y8, Y13; \
	VPMADDWD     Y11, Y13, Y13; \
	VCVTDQ2PS    Y13, Y13; \
	VBROADCASTSS TO(DX), Y14; \
	VMULPS       Y14, Y13, Y13; \
	VADDPS       Y13, ACC, ACC

// FOLD1 adds an input's odd-block lanes O to its even-block lanes A (acc[l] + acc[l+8]),
// reduces them and stores the result at R10.
#define FOLD1(A, XA, O) \
	VADDPS O, A, A; \
	REDUCE8(A, XA, X15); \
	VMOVSS XA, (R10)

// func gemmQ8x1x4AVX2(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, scales, tab, acc *float32, flags int)
//
// For each of tiles Q8_0 rows (rb bytes apart from w): nb blocks of the row (nb > 0; a
// chunk of a longer row, see matMulQ8_0) against the four inputs packed at xp, with the
// inputs' block scales at scales (four to a block). Y0..Y3 are the even blocks'
// accumulators of inputs 0..3, Y4..Y7 the odd ones'. They start at zero or, with
// gemmAccLoad, from the row's 64 floats at acc (acc + 256·t bytes for row t); with
// gemmAccStore they go back there, else the row's result for input j, REDUCE8(even + odd),
// goes to out[j·outStride + t]. tab holds 4·nb floats of scratch (the row's scale
// products).
TEXT ·gemmQ8x1x4AVX2(SB), NOSPLIT, $0-88
	MOVL         $0x00010001, AX
	MOVD         AX, X11
	VPBROADCASTD X11, Y11
	MOVQ         tiles+48(FP), R12
	MOVQ         out+0(FP), AX
	MOVQ         w+16(FP), R9
	MOVQ         outStride+8(FP), R13
	SHLQ         $2, R13
	MOVQ         acc+72(FP), R8

tile:
	// The scale products: [dw(b) ×4, dw(b+1) ×4] · [dx(b) of inputs 0..3, dx(b+1) of 0..3].
	MOVQ R9, SI
	MOVQ scales+56(FP), BX
	MOVQ tab+64(FP), DX
	MOVQ nb+40(FP), CX
	SHRQ $1, CX
	JZ   scaleLast

scalePairs:
	VPBROADCASTW (SI), X10
	VPBROADCASTW 34(SI), X12
	VPUNPCKLQDQ  X12, X10, X10
	VCVTPH2PS    X10, Y10
	VMULPS       (BX), Y10, Y10
	VMOVUPS      Y10, (DX)
	ADDQ         $68, SI
	ADDQ         $32, BX
	ADDQ         $32, DX
	DECQ         CX
	JNZ          scalePairs

scaleLast:
	TESTQ        $1, nb+40(FP)
	JZ           products
	VPBROADCASTW (SI), X10
	VCVTPH2PS    X10, X10
	VMULPS       (BX), X10, X10
	VMOVUPS      X10, (DX)

products:
	MOVQ   R9, SI
	MOVQ   xp+32(FP), DI
	MOVQ   tab+64(FP), DX
	MOVQ   nb+40(FP), CX
	SHRQ   $1, CX
	TESTQ  $1, flags+80(FP) // gemmAccLoad
	JNZ    loadAcc
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	JMP    started

loadAcc:
	VMOVUPS (R8), Y0
	VMOVUPS 32(R8), Y1
	VMOVUPS 64(R8), Y2
	VMOVUPS 96(R8), Y3
	VMOVUPS 128(R8), Y4
	VMOVUPS 160(R8), Y5
	VMOVUPS 192(R8), Y6
	VMOVUPS 224(R8), Y7

started:
	TESTQ CX, CX
	JZ    last

pairs:
	Q8BLOCKAVX2(0, 0, 64, 0, Y0, Y1, Y2, Y3)
	Q8BLOCKAVX2(34, 32, 64, 16, Y4, Y5, Y6, Y7)
	ADDQ $68, SI
	ADDQ $768, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  pairs

last:
	TESTQ $1, nb+40(FP)
	JZ    done
	Q8BLOCKAVX2(0, 0, 32, 0, Y0, Y1, Y2, Y3)

done:
	TESTQ $2, flags+80(FP) // gemmAccStore
	JZ    fold
	VMOVUPS Y0, (R8)
	VMOVUPS Y1, 32(R8)
	VMOVUPS Y2, 64(R8)
	VMOVUPS Y3, 96(R8)
	VMOVUPS Y4, 128(R8)
	VMOVUPS Y5, 160(R8)
	VMOVUPS Y6, 192(R8)
	VMOVUPS Y7, 224(R8)
	JMP     next

fold:
	MOVQ AX, R10
	FOLD1(Y0, X0, Y4)
	ADDQ R13, R10
	FOLD1(Y1, X1, Y5)
	ADDQ R13, R10
	FOLD1(Y2, X2, Y6)
	ADDQ R13, R10
	FOLD1(Y3, X3, Y7)

next:
	ADDQ   $4, AX
	ADDQ   $256, R8
	ADDQ   rb+24(FP), R9
	DECQ   R12
	JNZ    tile
	VZEROUPPER
	RET
