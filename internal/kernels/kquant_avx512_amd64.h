// The Q8_K-side constants and the decoding steps of the k-quant blocks that the AVX-512
// row dots (kquant_avx512_amd64.s) and the batched products (kbatch_avx512_amd64.s) share.
// The tables are file-local (<>): each file that includes this one has its copy.

#include "kquant_amd64.h"

// kScaleIdx are the VPSHUFB indexes that make, from the 16 bytes
// [sc0..sc3, m0..m3, sc4..sc7, m4..m7] in every 128-bit lane, the words of sub-block
// scales for a 512-bit register of 64 values: scale 2c in its lower 256 bits, 2c+1 in its
// upper (kScaleIdx+64c); and, in 256 bits, the mins doubled, m0 m0 m1 m1 ... m7 m7
// (kScaleIdx+256).
DATA kScaleIdx<>+0(SB)/8, $0x8000800080008000
DATA kScaleIdx<>+8(SB)/8, $0x8000800080008000
DATA kScaleIdx<>+16(SB)/8, $0x8000800080008000
DATA kScaleIdx<>+24(SB)/8, $0x8000800080008000
DATA kScaleIdx<>+32(SB)/8, $0x8001800180018001
DATA kScaleIdx<>+40(SB)/8, $0x8001800180018001
DATA kScaleIdx<>+48(SB)/8, $0x8001800180018001
DATA kScaleIdx<>+56(SB)/8, $0x8001800180018001
DATA kScaleIdx<>+64(SB)/8, $0x8002800280028002
DATA kScaleIdx<>+72(SB)/8, $0x8002800280028002
DATA kScaleIdx<>+80(SB)/8, $0x8002800280028002
DATA kScaleIdx<>+88(SB)/8, $0x8002800280028002
DATA kScaleIdx<>+96(SB)/8, $0x8003800380038003
DATA kScaleIdx<>+104(SB)/8, $0x8003800380038003
DATA kScaleIdx<>+112(SB)/8, $0x8003800380038003
DATA kScaleIdx<>+120(SB)/8, $0x8003800380038003
DATA kScaleIdx<>+128(SB)/8, $0x8008800880088008
DATA kScaleIdx<>+136(SB)/8, $0x8008800880088008
DATA kScaleIdx<>+144(SB)/8, $0x8008800880088008
DATA kScaleIdx<>+152(SB)/8, $0x8008800880088008
DATA kScaleIdx<>+160(SB)/8, $0x8009800980098009
DATA kScaleIdx<>+168(SB)/8, $0x8009800980098009
DATA kScaleIdx<>+176(SB)/8, $0x8009800980098009
DATA kScaleIdx<>+184(SB)/8, $0x8009800980098009
DATA kScaleIdx<>+192(SB)/8, $0x800a800a800a800a
DATA kScaleIdx<>+200(SB)/8, $0x800a800a800a800a
DATA kScaleIdx<>+208(SB)/8, $0x800a800a800a800a
DATA kScaleIdx<>+216(SB)/8, $0x800a800a800a800a
DATA kScaleIdx<>+224(SB)/8, $0x800b800b800b800b
DATA kScaleIdx<>+232(SB)/8, $0x800b800b800b800b
DATA kScaleIdx<>+240(SB)/8, $0x800b800b800b800b
DATA kScaleIdx<>+248(SB)/8, $0x800b800b800b800b
DATA kScaleIdx<>+256(SB)/8, $0x8005800580048004
DATA kScaleIdx<>+264(SB)/8, $0x8007800780068006
DATA kScaleIdx<>+272(SB)/8, $0x800d800d800c800c
DATA kScaleIdx<>+280(SB)/8, $0x800f800f800e800e
GLOBL kScaleIdx<>(SB), RODATA|NOPTR, $288

// kShift04 shifts the words of a 512-bit register right by 0 in its lower half and by 4 in
// its upper half (VPSRLVW): 32 bytes of nibbles broadcast to both halves become the low
// nibbles (lower half) and the high nibbles (upper half).
DATA kShift04<>+0(SB)/8, $0
DATA kShift04<>+8(SB)/8, $0
DATA kShift04<>+16(SB)/8, $0
DATA kShift04<>+24(SB)/8, $0
DATA kShift04<>+32(SB)/8, $0x0004000400040004
DATA kShift04<>+40(SB)/8, $0x0004000400040004
DATA kShift04<>+48(SB)/8, $0x0004000400040004
DATA kShift04<>+56(SB)/8, $0x0004000400040004
GLOBL kShift04<>(SB), RODATA|NOPTR, $64

// KSCALEMIN6 puts KSCALEGPR's 16 bytes [sc0..sc3, m0..m3, sc4..sc7, m4..m7] in X1 and
// broadcasts them to the four lanes of Z1.
#define KSCALEMIN6(R) \
	KSCALEGPR(R); \
	VMOVQ      AX, X1; \
	VPINSRQ    $1, DX, X1, X1; \
	VSHUFI64X2 $0, Z1, Z1, Z1

// KNIB4 leaves in Z9 the 64 codes 64c..64c+63 of a Q4_K super-block: the 32 bytes at
// OFF(R)(R13*1) broadcast, shifted by kShift04 and masked to nibbles (Z31 = 0x0f…).
#define KNIB4(R, OFF) \
	VBROADCASTI64X4 OFF(R)(R13*1), Z9; \
	VPSRLVW         Z30, Z9, Z9; \
	VPANDD          Z31, Z9, Z9

// q6ShiftLo and q6ShiftHi move the two high bits of the Q6_K codes of one half's
// quarters 0, 1 (VPSLLVW by 4 and 2) and 2, 3 (VPSRLVW by 0 and 2) to bits 4-5, the qh
// bytes broadcast to both 256-bit halves.
DATA q6ShiftLo<>+0(SB)/8, $0x0004000400040004
DATA q6ShiftLo<>+8(SB)/8, $0x0004000400040004
DATA q6ShiftLo<>+16(SB)/8, $0x0004000400040004
DATA q6ShiftLo<>+24(SB)/8, $0x0004000400040004
DATA q6ShiftLo<>+32(SB)/8, $0x0002000200020002
DATA q6ShiftLo<>+40(SB)/8, $0x0002000200020002
DATA q6ShiftLo<>+48(SB)/8, $0x0002000200020002
DATA q6ShiftLo<>+56(SB)/8, $0x0002000200020002
GLOBL q6ShiftLo<>(SB), RODATA|NOPTR, $64

DATA q6ShiftHi<>+0(SB)/8, $0
DATA q6ShiftHi<>+8(SB)/8, $0
DATA q6ShiftHi<>+16(SB)/8, $0
DATA q6ShiftHi<>+24(SB)/8, $0
DATA q6ShiftHi<>+32(SB)/8, $0x0002000200020002
DATA q6ShiftHi<>+40(SB)/8, $0x0002000200020002
DATA q6ShiftHi<>+48(SB)/8, $0x0002000200020002
DATA q6ShiftHi<>+56(SB)/8, $0x0002000200020002
GLOBL q6ShiftHi<>(SB), RODATA|NOPTR, $64

// q5Sel selects, for VPTESTMB over Q5_K's qh bytes broadcast to both 256-bit halves, the
// fifth bits of the 64 values 64c..64c+63: bit 2c in the lower half, 2c+1 in the upper
// (q5Sel+64c).
DATA q5Sel<>+0(SB)/8, $0x0101010101010101
DATA q5Sel<>+8(SB)/8, $0x0101010101010101
DATA q5Sel<>+16(SB)/8, $0x0101010101010101
DATA q5Sel<>+24(SB)/8, $0x0101010101010101
DATA q5Sel<>+32(SB)/8, $0x0202020202020202
DATA q5Sel<>+40(SB)/8, $0x0202020202020202
DATA q5Sel<>+48(SB)/8, $0x0202020202020202
DATA q5Sel<>+56(SB)/8, $0x0202020202020202
DATA q5Sel<>+64(SB)/8, $0x0404040404040404
DATA q5Sel<>+72(SB)/8, $0x0404040404040404
DATA q5Sel<>+80(SB)/8, $0x0404040404040404
DATA q5Sel<>+88(SB)/8, $0x0404040404040404
DATA q5Sel<>+96(SB)/8, $0x0808080808080808
DATA q5Sel<>+104(SB)/8, $0x0808080808080808
DATA q5Sel<>+112(SB)/8, $0x0808080808080808
DATA q5Sel<>+120(SB)/8, $0x0808080808080808
DATA q5Sel<>+128(SB)/8, $0x1010101010101010
DATA q5Sel<>+136(SB)/8, $0x1010101010101010
DATA q5Sel<>+144(SB)/8, $0x1010101010101010
DATA q5Sel<>+152(SB)/8, $0x1010101010101010
DATA q5Sel<>+160(SB)/8, $0x2020202020202020
DATA q5Sel<>+168(SB)/8, $0x2020202020202020
DATA q5Sel<>+176(SB)/8, $0x2020202020202020
DATA q5Sel<>+184(SB)/8, $0x2020202020202020
DATA q5Sel<>+192(SB)/8, $0x4040404040404040
DATA q5Sel<>+200(SB)/8, $0x4040404040404040
DATA q5Sel<>+208(SB)/8, $0x4040404040404040
DATA q5Sel<>+216(SB)/8, $0x4040404040404040
DATA q5Sel<>+224(SB)/8, $0x8080808080808080
DATA q5Sel<>+232(SB)/8, $0x8080808080808080
DATA q5Sel<>+240(SB)/8, $0x8080808080808080
DATA q5Sel<>+248(SB)/8, $0x8080808080808080
GLOBL q5Sel<>(SB), RODATA|NOPTR, $256

// KNIB5 is KNIB4 for Q5_K (nibbles from byte 48 on) plus 16 where chunk C's fifth bit is
// set in the qh bytes broadcast in Z14 (Z13 = 0x10…).
#define KNIB5(R, C) \
	KNIB4(R, 48+32*C); \
	VPTESTMB q5Sel<>+64*C(SB), Z14, K1; \
	VPADDB   Z13, Z9, K1, Z9

// k2Shift02 and k2Shift46 shift the words of a 512-bit register right by 0 and 2 (lower
// and upper half), and by 4 and 6: the 2-bit codes of a half of a Q2_K or Q3_K super-block
// (32 bytes broadcast to both halves) for its quarters 0, 1 and 2, 3.
DATA k2Shift02<>+0(SB)/8, $0
DATA k2Shift02<>+8(SB)/8, $0
DATA k2Shift02<>+16(SB)/8, $0
DATA k2Shift02<>+24(SB)/8, $0
DATA k2Shift02<>+32(SB)/8, $0x0002000200020002
DATA k2Shift02<>+40(SB)/8, $0x0002000200020002
DATA k2Shift02<>+48(SB)/8, $0x0002000200020002
DATA k2Shift02<>+56(SB)/8, $0x0002000200020002
GLOBL k2Shift02<>(SB), RODATA|NOPTR, $64

DATA k2Shift46<>+0(SB)/8, $0x0004000400040004
DATA k2Shift46<>+8(SB)/8, $0x0004000400040004
DATA k2Shift46<>+16(SB)/8, $0x0004000400040004
DATA k2Shift46<>+24(SB)/8, $0x0004000400040004
DATA k2Shift46<>+32(SB)/8, $0x0006000600060006
DATA k2Shift46<>+40(SB)/8, $0x0006000600060006
DATA k2Shift46<>+48(SB)/8, $0x0006000600060006
DATA k2Shift46<>+56(SB)/8, $0x0006000600060006
GLOBL k2Shift46<>(SB), RODATA|NOPTR, $64

// Q3KSCALES unpacks the 12 bytes of 6-bit scales of a Q3_K super-block at 96(R)(R13*1)
// (Q3SCALEGPR) into 16 bytes in X1, widens them to words and subtracts 32 (Z11 = 32…): Y1
// holds the signed scales.
#define Q3KSCALES(R) \
	Q3SCALEGPR(R); \
	VMOVQ     AX, X1; \
	VPINSRQ   $1, BX, X1, X1; \
	VPMOVZXBW X1, Y1; \
	VPSUBW    Y11, Y1, Y1

