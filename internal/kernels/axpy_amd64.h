// The loop shared by axpyRowsAVXAsm (axpy_avx_amd64.s) and axpyF16RowsAVX2Asm
// (axpy_avx2_amd64.s), which differ only in how a row's eight columns are read.

// AXPYROWS adds a_t·x_t to dst for every row t in order: dst at DI, a at SI, CX = dst's
// bytes (n·4, n a positive multiple of 8), R13 = the rows' stride in bytes, R8 = rows. The
// columns go in chunks of 64 (eight accumulators Y1-Y8) then of 8 (Y1): each chunk of dst is
// loaded once, updated for every row in order, and stored once. ROWAT sets R9 to the first
// row's part of the chunk at dst's byte offset BX; ROW64 and ROW8 add one row's part at R9
// to Y1-Y8 and to Y1, with Y0 = a_t broadcast (Y9-Y15 scratch). R10 counts the rows left,
// R12 is the row index.
#define AXPYROWS(ROWAT, ROW64, ROW8) \
	XORQ BX, BX; \
	MOVQ CX, R11; \
	ANDQ $-256, R11; \
	JZ   chunks8; \
chunk64: \
	VMOVUPS (DI)(BX*1), Y1; \
	VMOVUPS 32(DI)(BX*1), Y2; \
	VMOVUPS 64(DI)(BX*1), Y3; \
	VMOVUPS 96(DI)(BX*1), Y4; \
	VMOVUPS 128(DI)(BX*1), Y5; \
	VMOVUPS 160(DI)(BX*1), Y6; \
	VMOVUPS 192(DI)(BX*1), Y7; \
	VMOVUPS 224(DI)(BX*1), Y8; \
	ROWAT; \
	XORQ    R12, R12; \
	MOVQ    R8, R10; \
rows64: \
	VBROADCASTSS (SI)(R12*4), Y0; \
	ROW64; \
	ADDQ R13, R9; \
	INCQ R12; \
	DECQ R10; \
	JNZ  rows64; \
	VMOVUPS Y1, (DI)(BX*1); \
	VMOVUPS Y2, 32(DI)(BX*1); \
	VMOVUPS Y3, 64(DI)(BX*1); \
	VMOVUPS Y4, 96(DI)(BX*1); \
	VMOVUPS Y5, 128(DI)(BX*1); \
	VMOVUPS Y6, 160(DI)(BX*1); \
	VMOVUPS Y7, 192(DI)(BX*1); \
	VMOVUPS Y8, 224(DI)(BX*1); \
	ADDQ    $256, BX; \
	CMPQ    BX, R11; \
	JNE     chunk64; \
chunks8: \
	CMPQ BX, CX; \
	JEQ  rowsdone; \
chunk8: \
	VMOVUPS (DI)(BX*1), Y1; \
	ROWAT; \
	XORQ    R12, R12; \
	MOVQ    R8, R10; \
rows8: \
	VBROADCASTSS (SI)(R12*4), Y0; \
	ROW8; \
	ADDQ R13, R9; \
	INCQ R12; \
	DECQ R10; \
	JNZ  rows8; \
	VMOVUPS Y1, (DI)(BX*1); \
	ADDQ    $32, BX; \
	CMPQ    BX, CX; \
	JNE     chunk8; \
rowsdone: \
	VZEROUPPER; \
	RET
