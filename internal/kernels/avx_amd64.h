// Macros shared by the AVX and AVX-512 kernels (dot_avx_amd64.s, matmul_avx_amd64.s,
// matmul_avx512_amd64.s, gemm_avx512_amd64.s, ...).

// TAILMASK loads into M the VMASKMOVPS mask whose first R lanes (1 ≤ R ≤ 7) are all ones
// and whose other lanes are zero: the eight dwords of ·tailMask starting at index 8-R.
// R is preserved; T1 and T2 are clobbered.
#define TAILMASK(R, T1, T2, M) \
	MOVQ    R, T2; \
	NEGQ    T2; \
	LEAQ    ·tailMask+32(SB), T1; \
	VMOVUPS (T1)(T2*4), M

// REDUCE8 combines the eight lanes l0..l7 of Y (whose low half is X) in the package's order
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) and leaves the sum in the low element of X.
// T is an X register, clobbered. Every VADDPS/VADDSS has the left operand of the Go
// expression as its first source.
#define REDUCE8(Y, X, T) \
	VEXTRACTF128 $1, Y, T; \
	VADDPS       T, X, X; \
	VMOVHLPS     X, X, T; \
	VADDPS       T, X, X; \
	VMOVSHDUP    X, T; \
	VADDSS       T, X, X

// MULADD adds float32(X·W) to the lanes in ACC (Y or Z registers): VMULPS then VADDPS,
// never fused, with the input vector as the first factor (Dot(x, w) computes x[i]*w[i]).
// P is scratch.
#define MULADD(X, W, P, ACC) \
	VMULPS W, X, P; \
	VADDPS P, ACC, ACC

// HALVES4 does the first two steps of REDUCE8 for the eight dot products in four
// accumulators A0..A3 (rows 0..3 of a pair of inputs, each register two eight-lane sums,
// lanes l0..l7 as four-lane halves c0 = l0..l3 and c1 = l4..l7): a_i = l_i + l_(i+4), then
// (a0+a2, a1+a3), leaving U with, per 128-bit chunk, [row 0 | row 1] of the pair's first
// input, the same for its second input, then [row 2 | row 3] of each. Z0..Z3 are scratch.
#define HALVES4(A0, A1, A2, A3, U) \
	VSHUFF32X4 $0x88, A2, A0, Z0; \
	VSHUFF32X4 $0xdd, A2, A0, Z1; \
	VADDPS     Z1, Z0, Z0; \
	VSHUFF32X4 $0x88, A3, A1, Z2; \
	VSHUFF32X4 $0xdd, A3, A1, Z3; \
	VADDPS     Z3, Z2, Z2; \
	VSHUFPS    $0x44, Z2, Z0, Z1; \
	VSHUFPS    $0xee, Z2, Z0, Z3; \
	VADDPS     Z3, Z1, U

// SUM8x4 finishes REDUCE8 for the two pairs of inputs in U1 and U2 (from HALVES4): the two
// half-sums of each dot product are added, first plus second, leaving F with the four rows
// of one input in each 128-bit chunk, inputs in order. Z0..Z3 are scratch.
#define SUM8x4(U1, U2, F) \
	VSHUFF32X4 $0x44, U2, U1, Z0; \
	VSHUFF32X4 $0xee, U2, U1, Z1; \
	VSHUFPS    $0x88, Z1, Z0, Z2; \
	VSHUFPS    $0xdd, Z1, Z0, Z3; \
	VADDPS     Z3, Z2, F

// F16LOAD and BF16LOAD make eight floats in Y from eight 16-bit values at M: VCVTPH2PS for
// halves (exact), VPMOVZXWD then a 16-bit left shift for bfloat16 (a bfloat16 b is the
// float32 with bits b<<16).
#define F16LOAD(M, Y) \
	VCVTPH2PS M, Y

#define BF16LOAD(M, Y) \
	VPMOVZXWD M, Y; \
	VPSLLD    $16, Y, Y

// REDUCE4 combines the lanes of four rows (A-D, whose low halves are XA-XD) in Dot's
// order into the low lanes of XA-XD; X8-X11 are scratch.
#define REDUCE4(A, XA, B, XB, C, XC, D, XD) \
	REDUCE8(A, XA, X8); \
	REDUCE8(B, XB, X9); \
	REDUCE8(C, XC, X10); \
	REDUCE8(D, XD, X11)

// ROW4END combines the lanes of four rows (Y0-Y3) in Dot's order and stores the four
// results at DX; X8-X11 are scratch.
#define ROW4END \
	REDUCE4(Y0, X0, Y1, X1, Y2, X2, Y3, X3); \
	VMOVSS X0, (DX); \
	VMOVSS X1, 4(DX); \
	VMOVSS X2, 8(DX); \
	VMOVSS X3, 12(DX)

// The quarter walks (rowdot_avx2_amd64.s, matmul_avx_amd64.s): four rows at a time, row i
// of each of four quarters of q rows, each quarter one stream with its row two on
// prefetched.
//
// QSTART points SI, R8, R9, R10 at the first rows of the four quarters (q rows of
// STRIDEARG bytes apart: QARG and STRIDEARG, a register or an argument, from the row at
// WARG) and R11, R12, R13, BX at the rows two on; AX is scratch.
#define QSTART(WARG, QARG, STRIDEARG) \
	MOVQ  WARG, SI; \
	MOVQ  QARG, BX; \
	IMULQ STRIDEARG, BX; \
	LEAQ  (SI)(BX*1), R8; \
	LEAQ  (R8)(BX*1), R9; \
	LEAQ  (R9)(BX*1), R10; \
	MOVQ  STRIDEARG, AX; \
	LEAQ  (SI)(AX*2), R11; \
	LEAQ  (R8)(AX*2), R12; \
	LEAQ  (R9)(AX*2), R13; \
	LEAQ  (R10)(AX*2), BX

// QSTORE4 stores the results A, B, C, D of the four quarters' rows at CX, CX + 4q,
// CX + 8q and CX + 12q bytes, q in AX (CX is moved).
#define QSTORE4(A, B, C, D) \
	VMOVSS A, (CX); \
	VMOVSS B, (CX)(AX*4); \
	LEAQ   (CX)(AX*8), CX; \
	VMOVSS C, (CX); \
	VMOVSS D, (CX)(AX*4)

// QNEXT moves the row, prefetch and output pointers on by one row (STRIDEARG bytes, and 4
// bytes at DX); AX is scratch.
#define QNEXT(STRIDEARG) \
	MOVQ STRIDEARG, AX; \
	ADDQ AX, SI; \
	ADDQ AX, R8; \
	ADDQ AX, R9; \
	ADDQ AX, R10; \
	ADDQ AX, R11; \
	ADDQ AX, R12; \
	ADDQ AX, R13; \
	ADDQ AX, BX; \
	ADDQ $4, DX

// ZERO16TO31 clears Z16-Z31 (and so Y16-Y31), the accumulators of the AVX-512 kernels that
// keep sixteen (rowdot_avx512_amd64.s, gemm_avx512_amd64.s).
#define ZERO16TO31 \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; \
	VPXORD Z29, Z29, Z29; \
	VPXORD Z30, Z30, Z30; \
	VPXORD Z31, Z31, Z31
