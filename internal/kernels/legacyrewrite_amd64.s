//go:build amd64 && !purego

#include "textflag.h"

// The legacy blocks without a min rewritten as Q8_0 blocks (legacybatch.go) with AVX2, a
// block per iteration: the fp16 scale copied through AX, the 32 codes as one YMM register
// of int8 (the low nibbles of qs in bytes 0-15, the high ones in 16-31, less the offset).

// l5BitByte makes, from qh broadcast to every dword, byte i of each 128-bit lane the byte
// of qh that holds value i's fifth bit: bytes 0 and 1 in the low lane, 2 and 3 in the
// high. l5BitMask picks bit i mod 8 of it.
DATA l5BitByte<>+0(SB)/8, $0x0000000000000000
DATA l5BitByte<>+8(SB)/8, $0x0101010101010101
DATA l5BitByte<>+16(SB)/8, $0x0202020202020202
DATA l5BitByte<>+24(SB)/8, $0x0303030303030303
GLOBL l5BitByte<>(SB), RODATA|NOPTR, $32

DATA l5BitMask<>+0(SB)/8, $0x8040201008040201
DATA l5BitMask<>+8(SB)/8, $0x8040201008040201
DATA l5BitMask<>+16(SB)/8, $0x8040201008040201
DATA l5BitMask<>+24(SB)/8, $0x8040201008040201
GLOBL l5BitMask<>(SB), RODATA|NOPTR, $32

// LNIBBLES loads the 16 bytes of nibbles at QS(SI) and leaves the 32 codes in value order
// in Y0 (Y15 = 0x0f in every byte; X1 scratch).
#define LNIBBLES(QS) \
	VMOVDQU     QS(SI), X0; \
	VPSRLW      $4, X0, X1; \
	VPAND       X15, X0, X0; \
	VPAND       X15, X1, X1; \
	VINSERTI128 $1, X1, Y0, Y0

// LSCALE copies the block's fp16 scale to the Q8_0 block.
#define LSCALE \
	MOVW (SI), AX; \
	MOVW AX, (DI)

// LARGS loads the arguments (dst DI, src SI, blocks CX) and the constants: Y15 = 0x0f and
// Y14 = OFFSET in every byte.
#define LARGS(OFFSET) \
	MOVQ         dst+0(FP), DI; \
	MOVQ         src+8(FP), SI; \
	MOVQ         blocks+16(FP), CX; \
	MOVL         $0x0f0f0f0f, AX; \
	MOVD         AX, X15; \
	VPBROADCASTD X15, Y15; \
	MOVL         $OFFSET, AX; \
	MOVD         AX, X14; \
	VPBROADCASTD X14, Y14

// func q4_0AsQ8_0AVX2(dst, src *byte, blocks int)
TEXT ·q4_0AsQ8_0AVX2(SB), NOSPLIT, $0-24
	LARGS(0x08080808)

q40block:
	LSCALE
	LNIBBLES(2)
	VPSUBB  Y14, Y0, Y0
	VMOVDQU Y0, 2(DI)
	ADDQ    $18, SI
	ADDQ    $34, DI
	DECQ    CX
	JNZ     q40block
	VZEROUPPER
	RET

// func q5_0AsQ8_0AVX2(dst, src *byte, blocks int)
TEXT ·q5_0AsQ8_0AVX2(SB), NOSPLIT, $0-24
	LARGS(0x10101010)
	VMOVDQU      l5BitByte<>(SB), Y13
	VMOVDQU      l5BitMask<>(SB), Y12

q50block:
	LSCALE
	LNIBBLES(6)
	VPBROADCASTD 2(SI), Y2
	VPSHUFB      Y13, Y2, Y2
	VPAND        Y12, Y2, Y2
	VPCMPEQB     Y12, Y2, Y2
	VPAND        Y14, Y2, Y2
	VPOR         Y2, Y0, Y0
	VPSUBB       Y14, Y0, Y0
	VMOVDQU      Y0, 2(DI)
	ADDQ         $22, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q50block
	VZEROUPPER
	RET
