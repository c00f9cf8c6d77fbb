// The unpacking of the k-quants' packed 6-bit scales in general-purpose registers, which
// the AVX2 and AVX-512 kernels share.

// KSCALEGPR unpacks the 12 bytes of 6-bit scales and mins at 4(R)(R13*1) (Q4_K, Q5_K)
// into AX = [sc0..sc3, m0..m3] and DX = [sc4..sc7, m4..m7]: sc0..3 and m0..3 are bytes 0-7
// less their top two bits (R14 = 0x3f…); sc4..7 and m4..7 are the low and high nibbles of
// bytes 8-11 (R15 = 0x0f…) with, above them, the top two bits of bytes 0-3 and 4-7
// (R12 = 0x30…, after a shift by 2). BX and CX are scratch.
#define KSCALEGPR(R) \
	MOVQ       4(R)(R13*1), AX; \
	MOVL       12(R)(R13*1), DX; \
	MOVQ       AX, BX; \
	SHRQ       $2, BX; \
	ANDQ       R12, BX; \
	MOVQ       DX, CX; \
	SHLQ       $28, CX; \
	ORQ        CX, DX; \
	ANDQ       R15, DX; \
	ORQ        BX, DX; \
	ANDQ       R14, AX

// Q3SCALEGPR unpacks the 12 bytes of 6-bit scales of a Q3_K super-block at 96(R)(R13*1)
// into AX = s0..s7 and BX = s8..s15, each scale plus 32, as dequantize_row_q3_K does: the
// low nibbles of scales 0-7 are bytes 0-7's, of scales 8-15 their high nibbles, and the
// top two bits of scale j are bits 2·(j/4) of byte 8 + j%4 (R15 = 0x0f…, R12 = 0x03…). CX
// and DX are scratch.
#define Q3SCALEGPR(R) \
	MOVQ      96(R)(R13*1), AX; \
	MOVL      104(R)(R13*1), DX; \
	MOVQ      DX, CX; \
	SHRQ      $2, CX; \
	SHLQ      $32, CX; \
	ORQ       CX, DX; \
	MOVQ      AX, BX; \
	SHRQ      $4, BX; \
	MOVQ      DX, CX; \
	SHRQ      $4, CX; \
	ANDQ      R15, AX; \
	ANDQ      R15, BX; \
	ANDQ      R12, DX; \
	ANDQ      R12, CX; \
	SHLQ      $4, DX; \
	SHLQ      $4, CX; \
	ORQ       DX, AX; \
	ORQ       CX, BX
