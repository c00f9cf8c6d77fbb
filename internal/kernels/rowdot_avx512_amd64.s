//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// The four-row, four-input 16-bit row dots with AVX-512 (rowdot_amd64.go): the four-row
// kernels of rowdot_avx2_amd64.s for four input vectors at once, using the sixteen extra YMM
// registers AVX-512 gives (Y16..Y31) for the sixteen (row, input) lane sets. Each lane's
// arithmetic is the AVX2 kernels': VMULPS then VADDPS, never fused, in Dot's order.

// ROW4X4GROUP adds eight values of each row times each input to their lanes.
#define ROW4X4GROUP(LOAD) \
	PREFETCHT1 (R11)(AX*8); \
	LOAD((SI)(AX*2), Y0); \
	LOAD((R8)(AX*2), Y1); \
	LOAD((R9)(AX*2), Y2); \
	LOAD((R10)(AX*2), Y3); \
	VMOVUPS    (DI)(AX*4), Y4; \
	VMOVUPS    (R12)(AX*4), Y5; \
	VMOVUPS    (R13)(AX*4), Y6; \
	VMOVUPS    (R14)(AX*4), Y7; \
	MULADD(Y4, Y0, Y8, Y16); \
	MULADD(Y4, Y1, Y9, Y17); \
	MULADD(Y4, Y2, Y10, Y18); \
	MULADD(Y4, Y3, Y11, Y19); \
	MULADD(Y5, Y0, Y8, Y20); \
	MULADD(Y5, Y1, Y9, Y21); \
	MULADD(Y5, Y2, Y10, Y22); \
	MULADD(Y5, Y3, Y11, Y23); \
	MULADD(Y6, Y0, Y8, Y24); \
	MULADD(Y6, Y1, Y9, Y25); \
	MULADD(Y6, Y2, Y10, Y26); \
	MULADD(Y6, Y3, Y11, Y27); \
	MULADD(Y7, Y0, Y8, Y28); \
	MULADD(Y7, Y1, Y9, Y29); \
	MULADD(Y7, Y2, Y10, Y30); \
	MULADD(Y7, Y3, Y11, Y31)

// ROW4X4STORE reduces one input's four rows (lanes in A, B, C, D) in Dot's order and
// stores them at DX (ROW4END on copies in Y0-Y3).
#define ROW4X4STORE(A, B, C, D) \
	VMOVAPS A, Y0; \
	VMOVAPS B, Y1; \
	VMOVAPS C, Y2; \
	VMOVAPS D, Y3; \
	ROW4END

// ROW4X4 is the whole of a four-row, four-input kernel: the arguments, the loop (label L),
// then input j's four results at out + 4·j·outStride bytes.
#define ROW4X4(LOAD, L) \
	MOVQ   out+0(FP), DX; \
	MOVQ   w+16(FP), SI; \
	MOVQ   x+24(FP), DI; \
	MOVQ   n+32(FP), CX; \
	LEAQ   (SI)(CX*2), R8; \
	LEAQ   (R8)(CX*2), R9; \
	LEAQ   (R9)(CX*2), R10; \
	LEAQ   (R10)(CX*2), R11; \
	LEAQ   (DI)(CX*4), R12; \
	LEAQ   (R12)(CX*4), R13; \
	LEAQ   (R13)(CX*4), R14; \
	ZERO16TO31; \
	XORQ   AX, AX; \
L: \
	ROW4X4GROUP(LOAD); \
	ADDQ   $8, AX; \
	CMPQ   AX, CX; \
	JNE    L; \
	MOVQ   outStride+8(FP), BX; \
	SHLQ   $2, BX; \
	ROW4X4STORE(Y16, Y17, Y18, Y19); \
	ADDQ   BX, DX; \
	ROW4X4STORE(Y20, Y21, Y22, Y23); \
	ADDQ   BX, DX; \
	ROW4X4STORE(Y24, Y25, Y26, Y27); \
	ADDQ   BX, DX; \
	ROW4X4STORE(Y28, Y29, Y30, Y31); \
	VZEROUPPER

// ROW4ZSTART loads the arguments of the ZMM-pair kernels (out DX, the rows SI, R8, R9, R10
// and the next four R11, the packed inputs DI, n CX) and clears the accumulators and AX.
#define ROW4ZSTART \
	MOVQ   out+0(FP), DX; \
	MOVQ   w+16(FP), SI; \
	MOVQ   xp+24(FP), DI; \
	MOVQ   n+32(FP), CX; \
	LEAQ   (SI)(CX*2), R8; \
	LEAQ   (R8)(CX*2), R9; \
	LEAQ   (R9)(CX*2), R10; \
	LEAQ   (R10)(CX*2), R11; \
	ZERO16TO31; \
	XORQ   AX, AX

// ROW4ZLOOP runs GROUP over the groups of eight columns (label L), the packed inputs BYTES
// a group, and leaves the output stride in bytes in BX.
#define ROW4ZLOOP(GROUP, BYTES, L) \
L: \
	GROUP; \
	ADDQ $BYTES, DI; \
	ADDQ $8, AX; \
	CMPQ AX, CX; \
	JNE  L; \
	MOVQ outStride+8(FP), BX; \
	SHLQ $2, BX

// ROW4X8 is the body of the eight-input kernels (WIDEN the rows' format, L the loop's
// label): the groups of eight columns, then the 32 sums reduced and stored.
#define ROW4X8(WIDEN, L) \
	ROW4ZSTART; \
	ROW4ZLOOP(ROW4X8GROUP(WIDEN), 256, L); \
	ROW4X8STORE(Z16, Z17, Z18, Z19, Y16, Y17, Y18, Y19); \
	ROW4X8STORE(Z20, Z21, Z22, Z23, Y20, Y21, Y22, Y23); \
	ROW4X8STORE(Z24, Z25, Z26, Z27, Y24, Y25, Y26, Y27); \
	ROW4X8STORE(Z28, Z29, Z30, Z31, Y28, Y29, Y30, Y31); \
	VZEROUPPER; \
	RET

// ROW4X4Z is ROW4X8 for the four-input kernels.
#define ROW4X4Z(WIDEN, L) \
	ROW4ZSTART; \
	ROW4ZLOOP(ROW4X4ZGROUP(WIDEN), 128, L); \
	ROW4X8STORE(Z16, Z17, Z18, Z19, Y16, Y17, Y18, Y19); \
	ROW4X8STORE(Z20, Z21, Z22, Z23, Y20, Y21, Y22, Y23); \
	VZEROUPPER; \
	RET

// func dotF16x4x4AVX512(out *float32, outStride int, w *byte, x *float32, n int)
//
// n > 0 is a multiple of 8; the four rows are consecutive (2n bytes each), the four inputs
// too (n floats each); row k of input j goes to out[j·outStride + k].
TEXT ·dotF16x4x4AVX512(SB), NOSPLIT, $0-40
	ROW4X4(F16LOAD, loop)
	RET

// func dotBF16x4x4AVX512(out *float32, outStride int, w *byte, x *float32, n int)
//
// As dotF16x4x4AVX512, for bfloat16 rows.
TEXT ·dotBF16x4x4AVX512(SB), NOSPLIT, $0-40
	ROW4X4(BF16LOAD, loop)
	RET

// The four-row, eight-input f16 kernel in ZMM registers: Dot's eight lanes of two (row,
// input) pairs side by side in one ZMM accumulator, so that 512-bit multiplies and adds do
// two pairs' work (Zen 5's datapaths are 512 bits wide). The inputs come packed by
// packInputPairs: for each group of eight columns, four ZMM of two inputs' eight floats
// (input 2p in the low half, 2p+1 in the high). A row's eight halves are broadcast to both
// halves (VBROADCASTI128) and widened (VCVTPH2PS, exact). Each lane's arithmetic is still
// x·w rounded, then added (MULADD), in Dot's order; the halves are reduced as ROW4END
// reduces a YMM.

// ROW4ZROWS prefetches the next four rows' bytes into L2 and widens eight values of each of
// the four rows, broadcast to both halves, into Z0..Z3 (WIDEN: F16WIDEN or BF16WIDEN).
#define ROW4ZROWS(WIDEN) \
	PREFETCHT1      (R11)(AX*8); \
	VBROADCASTI128  (SI)(AX*2), Y0; \
	VBROADCASTI128  (R8)(AX*2), Y1; \
	VBROADCASTI128  (R9)(AX*2), Y2; \
	VBROADCASTI128  (R10)(AX*2), Y3; \
	WIDEN(Y0, Z0); \
	WIDEN(Y1, Z1); \
	WIDEN(Y2, Z2); \
	WIDEN(Y3, Z3)

// F16WIDEN and BF16WIDEN widen sixteen 16-bit values in Y to float32 in Z, exactly:
// VCVTPH2PS for halves; for bfloat16 VPMOVZXWD, then a 16-bit left shift (BF16LOAD's
// arithmetic).
#define F16WIDEN(Y, Z) VCVTPH2PS Y, Z
#define BF16WIDEN(Y, Z) VPMOVZXWD Y, Z; VPSLLD $16, Z, Z

// ROW4X8GROUP adds eight values of each row (ROW4ZROWS) times each input to their lanes:
// (row r, inputs 2p and 2p+1) in Z(16+4p+r).
#define ROW4X8GROUP(WIDEN) \
	ROW4ZROWS(WIDEN); \
	VMOVUPS         (DI), Z4; \
	VMOVUPS         64(DI), Z5; \
	VMOVUPS         128(DI), Z6; \
	VMOVUPS         192(DI), Z7; \
	MULADD(Z4, Z0, Z8, Z16); \
	MULADD(Z4, Z1, Z9, Z17); \
	MULADD(Z4, Z2, Z10, Z18); \
	MULADD(Z4, Z3, Z11, Z19); \
	MULADD(Z5, Z0, Z12, Z20); \
	MULADD(Z5, Z1, Z13, Z21); \
	MULADD(Z5, Z2, Z14, Z22); \
	MULADD(Z5, Z3, Z15, Z23); \
	MULADD(Z6, Z0, Z8, Z24); \
	MULADD(Z6, Z1, Z9, Z25); \
	MULADD(Z6, Z2, Z10, Z26); \
	MULADD(Z6, Z3, Z11, Z27); \
	MULADD(Z7, Z0, Z12, Z28); \
	MULADD(Z7, Z1, Z13, Z29); \
	MULADD(Z7, Z2, Z14, Z30); \
	MULADD(Z7, Z3, Z15, Z31)

// ROW4X8STORE reduces and stores the four rows of the pair of inputs in A, B, C, D (ZMM,
// their low halves YA..YD): input 2p's at DX, then 2p+1's BX bytes on; DX ends BX bytes
// past the second.
#define ROW4X8STORE(A, B, C, D, YA, YB, YC, YD) \
	ROW4X4STORE(YA, YB, YC, YD); \
	ADDQ          BX, DX; \
	VEXTRACTF64X4 $1, A, Y0; \
	VEXTRACTF64X4 $1, B, Y1; \
	VEXTRACTF64X4 $1, C, Y2; \
	VEXTRACTF64X4 $1, D, Y3; \
	ROW4END; \
	ADDQ          BX, DX

// func dotF16x4x8AVX512(out *float32, outStride int, w *byte, xp *float32, n int)
//
// n > 0 is a multiple of 8; the four rows are consecutive (2n bytes each); xp holds the
// eight inputs (n floats each) packed by packInputPairs; row k of input j goes to
// out[j·outStride + k].
TEXT ·dotF16x4x8AVX512(SB), NOSPLIT, $0-40
	ROW4X8(F16WIDEN, loop8)

// func dotBF16x4x8AVX512(out *float32, outStride int, w *byte, xp *float32, n int)
//
// As dotF16x4x8AVX512, for bfloat16 rows.
TEXT ·dotBF16x4x8AVX512(SB), NOSPLIT, $0-40
	ROW4X8(BF16WIDEN, loopbf8)

// ROW4X4ZGROUP is ROW4X8GROUP for four inputs packed by packInputPairs (two pairs, 128
// bytes a group of eight columns): (row r, inputs 2p and 2p+1) in Z(16+4p+r). Against
// dotF16x4x4AVX512's sixteen YMM products of a group, eight ZMM ones.
#define ROW4X4ZGROUP(WIDEN) \
	ROW4ZROWS(WIDEN); \
	VMOVUPS         (DI), Z4; \
	VMOVUPS         64(DI), Z5; \
	MULADD(Z4, Z0, Z8, Z16); \
	MULADD(Z4, Z1, Z9, Z17); \
	MULADD(Z4, Z2, Z10, Z18); \
	MULADD(Z4, Z3, Z11, Z19); \
	MULADD(Z5, Z0, Z12, Z20); \
	MULADD(Z5, Z1, Z13, Z21); \
	MULADD(Z5, Z2, Z14, Z22); \
	MULADD(Z5, Z3, Z15, Z23)

// func dotF16x4x4ZAVX512(out *float32, outStride int, w *byte, xp *float32, n int)
//
// dotF16x4x8AVX512 for four inputs packed by packInputPairs at xp: n > 0 a multiple of 8,
// the four rows consecutive (2n bytes each); row k of input j goes to out[j·outStride + k].
TEXT ·dotF16x4x4ZAVX512(SB), NOSPLIT, $0-40
	ROW4X4Z(F16WIDEN, loop4z)

// func dotBF16x4x4ZAVX512(out *float32, outStride int, w *byte, xp *float32, n int)
//
// As dotF16x4x4ZAVX512, for bfloat16 rows.
TEXT ·dotBF16x4x4ZAVX512(SB), NOSPLIT, $0-40
	ROW4X4Z(BF16WIDEN, loopbf4z)
