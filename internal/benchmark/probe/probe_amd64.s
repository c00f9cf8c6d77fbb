//go:build amd64 && !purego

#include "textflag.h"

// func fmaPeakAVX2(iters int)
// 12 independent chains of 8-lane fused multiply-adds per iteration: 192 flops.
TEXT ·fmaPeakAVX2(SB), NOSPLIT, $0-8
	MOVQ iters+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	TESTQ CX, CX
	JLE done
loop:
	VFMADD231PS Y12, Y13, Y0
	VFMADD231PS Y12, Y13, Y1
	VFMADD231PS Y12, Y13, Y2
	VFMADD231PS Y12, Y13, Y3
	VFMADD231PS Y12, Y13, Y4
	VFMADD231PS Y12, Y13, Y5
	VFMADD231PS Y12, Y13, Y6
	VFMADD231PS Y12, Y13, Y7
	VFMADD231PS Y12, Y13, Y8
	VFMADD231PS Y12, Y13, Y9
	VFMADD231PS Y12, Y13, Y10
	VFMADD231PS Y12, Y13, Y11
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET

// func mulAddPeakAVX(iters int)
// 12 independent chains of 8-lane multiply then add (the kernels' unfused arithmetic) per
// iteration, the products in two alternating registers: 192 flops. (With six chains the
// additions wait on each other: on AMD Zen 4 that measured a quarter below the peak, which
// twelve reach, as fused multiply-adds do.)
TEXT ·mulAddPeakAVX(SB), NOSPLIT, $0-8
	MOVQ iters+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	TESTQ CX, CX
	JLE done2
loop2:
	VMULPS Y14, Y15, Y12
	VADDPS Y12, Y0, Y0
	VMULPS Y14, Y15, Y13
	VADDPS Y13, Y1, Y1
	VMULPS Y14, Y15, Y12
	VADDPS Y12, Y2, Y2
	VMULPS Y14, Y15, Y13
	VADDPS Y13, Y3, Y3
	VMULPS Y14, Y15, Y12
	VADDPS Y12, Y4, Y4
	VMULPS Y14, Y15, Y13
	VADDPS Y13, Y5, Y5
	VMULPS Y14, Y15, Y12
	VADDPS Y12, Y6, Y6
	VMULPS Y14, Y15, Y13
	VADDPS Y13, Y7, Y7
	VMULPS Y14, Y15, Y12
	VADDPS Y12, Y8, Y8
	VMULPS Y14, Y15, Y13
	VADDPS Y13, Y9, Y9
	VMULPS Y14, Y15, Y12
	VADDPS Y12, Y10, Y10
	VMULPS Y14, Y15, Y13
	VADDPS Y13, Y11, Y11
	DECQ CX
	JNZ loop2
done2:
	VZEROUPPER
	RET

// func fmaPeakAVX512(iters int)
// fmaPeakAVX2 in 16-lane ZMM registers: 384 flops per iteration.
TEXT ·fmaPeakAVX512(SB), NOSPLIT, $0-8
	MOVQ   iters+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	TESTQ  CX, CX
	JLE    done3

loop3:
	VFMADD231PS Z12, Z13, Z0
	VFMADD231PS Z12, Z13, Z1
	VFMADD231PS Z12, Z13, Z2
	VFMADD231PS Z12, Z13, Z3
	VFMADD231PS Z12, Z13, Z4
	VFMADD231PS Z12, Z13, Z5
	VFMADD231PS Z12, Z13, Z6
	VFMADD231PS Z12, Z13, Z7
	VFMADD231PS Z12, Z13, Z8
	VFMADD231PS Z12, Z13, Z9
	VFMADD231PS Z12, Z13, Z10
	VFMADD231PS Z12, Z13, Z11
	DECQ        CX
	JNZ         loop3

done3:
	VZEROUPPER
	RET

// func mulAddPeakAVX512(iters int)
// mulAddPeakAVX in 16-lane ZMM registers, twelve products in their own registers: 384
// flops per iteration.
TEXT ·mulAddPeakAVX512(SB), NOSPLIT, $0-8
	MOVQ   iters+0(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	TESTQ  CX, CX
	JLE    done4

loop4:
	VMULPS Z30, Z31, Z12
	VADDPS Z12, Z0, Z0
	VMULPS Z30, Z31, Z13
	VADDPS Z13, Z1, Z1
	VMULPS Z30, Z31, Z14
	VADDPS Z14, Z2, Z2
	VMULPS Z30, Z31, Z15
	VADDPS Z15, Z3, Z3
	VMULPS Z30, Z31, Z16
	VADDPS Z16, Z4, Z4
	VMULPS Z30, Z31, Z17
	VADDPS Z17, Z5, Z5
	VMULPS Z30, Z31, Z18
	VADDPS Z18, Z6, Z6
	VMULPS Z30, Z31, Z19
	VADDPS Z19, Z7, Z7
	VMULPS Z30, Z31, Z20
	VADDPS Z20, Z8, Z8
	VMULPS Z30, Z31, Z21
	VADDPS Z21, Z9, Z9
	VMULPS Z30, Z31, Z22
	VADDPS Z22, Z10, Z10
	VMULPS Z30, Z31, Z23
	VADDPS Z23, Z11, Z11
	DECQ   CX
	JNZ    loop4

done4:
	VZEROUPPER
	RET

// func streamRead4AVX(p *float32, blocks, stride int) float32
//
// Reads blocks × 64 bytes from each of the four streams p, p+stride, p+2·stride and
// p+3·stride (stride in bytes) with eight independent accumulators (VADDPS from memory), so
// that the loop is bound by how fast memory delivers, and returns a value that depends on
// every element (their sum, in no promised order). For the roofline's bandwidth probe
// only. blocks > 0. Four streams: one per core does not keep enough reads in flight.
TEXT ·streamRead4AVX(SB), NOSPLIT, $0-28
	MOVQ   p+0(FP), SI
	MOVQ   blocks+8(FP), CX
	MOVQ   stride+16(FP), DX
	LEAQ   (SI)(DX*1), R8
	LEAQ   (R8)(DX*1), R9
	LEAQ   (R9)(DX*1), R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

stream4loop:
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS (R8), Y2, Y2
	VADDPS 32(R8), Y3, Y3
	VADDPS (R9), Y4, Y4
	VADDPS 32(R9), Y5, Y5
	VADDPS (R10), Y6, Y6
	VADDPS 32(R10), Y7, Y7
	ADDQ   $64, SI
	ADDQ   $64, R8
	ADDQ   $64, R9
	ADDQ   $64, R10
	DECQ   CX
	JNZ    stream4loop

	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y5, Y4, Y4
	VADDPS Y7, Y6, Y6
	VADDPS Y2, Y0, Y0
	VADDPS Y6, Y4, Y4
	VADDPS Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func int8PeakVNNI(iters int)
// 12 independent chains of VPDPBUSD on 512 bits per iteration (64 multiply-adds of byte
// pairs each, 2 operations apiece): 1536 operations.
TEXT ·int8PeakVNNI(SB), NOSPLIT, $0-8
	MOVQ   iters+0(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	TESTQ  CX, CX
	JLE    int8vnnidone

int8vnniloop:
	VPDPBUSD Z12, Z13, Z0
	VPDPBUSD Z12, Z13, Z1
	VPDPBUSD Z12, Z13, Z2
	VPDPBUSD Z12, Z13, Z3
	VPDPBUSD Z12, Z13, Z4
	VPDPBUSD Z12, Z13, Z5
	VPDPBUSD Z12, Z13, Z6
	VPDPBUSD Z12, Z13, Z7
	VPDPBUSD Z12, Z13, Z8
	VPDPBUSD Z12, Z13, Z9
	VPDPBUSD Z12, Z13, Z10
	VPDPBUSD Z12, Z13, Z11
	DECQ     CX
	JNZ      int8vnniloop

int8vnnidone:
	VZEROUPPER
	RET

// func int8PeakAVX2(iters int)
// 8 independent chains of the AVX2 byte dot (VPMADDUBSW: 32 multiplies of byte pairs added
// in pairs; VPMADDWD by ones: the pairs added in fours; VPADDD into the lanes) per
// iteration: 32 multiply-adds, 64 operations, per chain and 512 per iteration.
TEXT ·int8PeakAVX2(SB), NOSPLIT, $0-8
	MOVQ    iters+0(FP), CX
	VPXOR   Y0, Y0, Y0
	VPXOR   Y1, Y1, Y1
	VPXOR   Y2, Y2, Y2
	VPXOR   Y3, Y3, Y3
	VPXOR   Y4, Y4, Y4
	VPXOR   Y5, Y5, Y5
	VPXOR   Y6, Y6, Y6
	VPXOR   Y7, Y7, Y7
	VPXOR   Y13, Y13, Y13
	VPXOR   Y14, Y14, Y14
	VPCMPEQW Y15, Y15, Y15
	VPSRLW  $15, Y15, Y15 // the words 1
	TESTQ   CX, CX
	JLE     int8avx2done

int8avx2loop:
	VPMADDUBSW Y13, Y14, Y8
	VPMADDUBSW Y13, Y14, Y9
	VPMADDUBSW Y13, Y14, Y10
	VPMADDUBSW Y13, Y14, Y11
	VPMADDWD   Y15, Y8, Y8
	VPMADDWD   Y15, Y9, Y9
	VPMADDWD   Y15, Y10, Y10
	VPMADDWD   Y15, Y11, Y11
	VPADDD     Y8, Y0, Y0
	VPADDD     Y9, Y1, Y1
	VPADDD     Y10, Y2, Y2
	VPADDD     Y11, Y3, Y3
	VPMADDUBSW Y13, Y14, Y8
	VPMADDUBSW Y13, Y14, Y9
	VPMADDUBSW Y13, Y14, Y10
	VPMADDUBSW Y13, Y14, Y11
	VPMADDWD   Y15, Y8, Y8
	VPMADDWD   Y15, Y9, Y9
	VPMADDWD   Y15, Y10, Y10
	VPMADDWD   Y15, Y11, Y11
	VPADDD     Y8, Y4, Y4
	VPADDD     Y9, Y5, Y5
	VPADDD     Y10, Y6, Y6
	VPADDD     Y11, Y7, Y7
	DECQ       CX
	JNZ        int8avx2loop

int8avx2done:
	VZEROUPPER
	RET
