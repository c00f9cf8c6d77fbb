// Macros shared by the AVX and AVX-512 kernels (dot_amd64.s, matmul_amd64.s,
// matmul_avx512_amd64.s).

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
