//go:build amd64 && !purego

#include "textflag.h"
#include "avx_amd64.h"

// tailMask is sixteen dwords, eight all-ones then eight zeros; TAILMASK reads the eight
// starting at 8-r to get a mask of r leading lanes.
DATA ·tailMask+0(SB)/4, $0xffffffff
DATA ·tailMask+4(SB)/4, $0xffffffff
DATA ·tailMask+8(SB)/4, $0xffffffff
DATA ·tailMask+12(SB)/4, $0xffffffff
DATA ·tailMask+16(SB)/4, $0xffffffff
DATA ·tailMask+20(SB)/4, $0xffffffff
DATA ·tailMask+24(SB)/4, $0xffffffff
DATA ·tailMask+28(SB)/4, $0xffffffff
DATA ·tailMask+32(SB)/4, $0
DATA ·tailMask+36(SB)/4, $0
DATA ·tailMask+40(SB)/4, $0
DATA ·tailMask+44(SB)/4, $0
DATA ·tailMask+48(SB)/4, $0
DATA ·tailMask+52(SB)/4, $0
DATA ·tailMask+56(SB)/4, $0
DATA ·tailMask+60(SB)/4, $0
GLOBL ·tailMask(SB), RODATA|NOPTR, $64

// func dotAVXAsm(x, y *float32, n int) float32
//
// Y0 holds the lanes l0..l7; AX is the byte offset of the current block of eight, BX the
// byte length of the whole blocks.
TEXT ·dotAVXAsm(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-8, BX
	SHLQ   $2, BX
	TESTQ  BX, BX
	JZ     tail

loop:
	// lanes += float32(x[i:i+8] * y[i:i+8])
	VMOVUPS (SI)(AX*1), Y1
	VMULPS  (DI)(AX*1), Y1, Y1
	VADDPS  Y1, Y0, Y0
	ADDQ    $32, AX
	CMPQ    AX, BX
	JNE     loop

tail:
	// The last n%8 products go to lanes 0..n%8-1; the other lanes get 0·0 = +0, as in the
	// zeroed tail array of dotGeneric. Masked loads read nothing past the end. When n%8 is
	// 0 the +0 padding is skipped: a lane is never -0 (see dotGeneric), so adding +0 would
	// change nothing.
	ANDQ       $7, CX
	JZ         reduce
	TAILMASK(CX, R8, R9, Y7)
	VMASKMOVPS (SI)(AX*1), Y7, Y1
	VMASKMOVPS (DI)(AX*1), Y7, Y2
	VMULPS     Y2, Y1, Y1
	VADDPS     Y1, Y0, Y0

reduce:
	REDUCE8(Y0, X0, X1)
	VMOVSS     X0, ret+24(FP)
	VZEROUPPER
	RET
