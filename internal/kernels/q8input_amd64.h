// Macros shared by the Q8_0 input quantizers, quantizeQ8AVX512 (q8input_avx512_amd64.s)
// and quantizeQ8AVX2 (q8input_avx2_amd64.s).

// Q8QUANTARGS loads their arguments: x in SI, nb in CX, qs in DI, d in R9, dLanes in R10,
// corr in R11, amax in R12.
#define Q8QUANTARGS \
	MOVQ x+0(FP), SI; \
	MOVQ nb+8(FP), CX; \
	MOVQ qs+16(FP), DI; \
	MOVQ d+24(FP), R9; \
	MOVQ dLanes+32(FP), R10; \
	MOVQ corr+40(FP), R11; \
	MOVQ amax+48(FP), R12

// Q8SCALE is a block's scale step, from its largest magnitude A (an X register holding the
// bit pattern of amax, stored at (R12)) and C = 127.0: to NONFINITE when amax is a NaN or
// an infinity; else D = fp16(amax/127) (VDIVSS, then VCVTPS2PH with round-to-nearest-even
// and back); to ZERO when d is 0; else I = id = 127/amax. AX is clobbered.
#define Q8SCALE(A, C, D, I, NONFINITE, ZERO) \
	VMOVSS    A, (R12); \
	VMOVD     A, AX; \
	CMPL      AX, $0x7f800000; \
	JAE       NONFINITE; \
	VDIVSS    C, A, D; \
	VCVTPS2PH $0, D, D; \
	VCVTPH2PS D, D; \
	VXORPS    I, I, I; \
	VUCOMISS  I, D; \
	JE        ZERO; \
	VDIVSS    A, C, I

// Q8STORE stores a block's d (D, an X register whose Y form is Y) and its eight lanes, and
// moves every pointer to the next block; then loops to LOOP while CX counts blocks left.
#define Q8STORE(D, Y, LOOP) \
	VMOVSS       D, (R9); \
	VBROADCASTSS D, Y; \
	VMOVUPS      Y, (R10); \
	ADDQ         $128, SI; \
	ADDQ         $32, DI; \
	ADDQ         $4, R9; \
	ADDQ         $32, R10; \
	ADDQ         $32, R11; \
	ADDQ         $4, R12; \
	DECQ         CX; \
	JNZ          LOOP
