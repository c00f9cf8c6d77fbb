//go:build amd64 && !purego

#include "textflag.h"

// func prefetchLines(p *byte, n int)
//
// PREFETCHT0 at p, p+64, ..., and at the last byte, so that every line the n bytes touch is
// requested.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ -1(SI)(CX*1), DX // the last byte

loop:
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	CMPQ       SI, DX
	JBE        loop
	PREFETCHT0 (DX)
	RET

// func prefetchLinesL2(p *byte, n int)
//
// prefetchLines with PREFETCHT1: every line the n bytes touch is requested into L2.
TEXT ·prefetchLinesL2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ -1(SI)(CX*1), DX // the last byte

loopl2:
	PREFETCHT1 (SI)
	ADDQ       $64, SI
	CMPQ       SI, DX
	JBE        loopl2
	PREFETCHT1 (DX)
	RET
