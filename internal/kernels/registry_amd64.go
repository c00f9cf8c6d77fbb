//go:build amd64 && !purego

package kernels

import (
	"fmt"

	"golang.org/x/sys/cpu"
)

// asmBuild says that this build has the assembly kernels.
const asmBuild = true

// cpuFeatures is what this CPU (and its operating system, which must save the YMM and
// ZMM registers: cpu.X86.HasAVX and HasAVX512F include that) offers the kernels.
var cpuFeatures = detectFeatures()

func detectFeatures() feature {
	var f feature
	for _, c := range []struct {
		has bool
		f   feature
	}{
		{cpu.X86.HasAVX, featAVX}, {cpu.X86.HasAVX2, featAVX2}, {cpu.X86.HasFMA, featFMA},
		{cpu.X86.HasF16C, featF16C}, {cpu.X86.HasAVX512F, featAVX512F},
		{cpu.X86.HasAVX512BW, featAVX512BW}, {cpu.X86.HasAVX512DQ, featAVX512DQ},
		{cpu.X86.HasAVX512VL, featAVX512VL}, {cpu.X86.HasAVX512VNNI, featAVX512VNNI},
	} {
		if c.has {
			f |= c.f
		}
	}
	return f
}

// cpuid executes the CPUID instruction for leaf and sub-leaf sub. Implemented in
// cpuid_amd64.s.
//
//go:noescape
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// zmmFullWidth says that this CPU runs 512-bit (ZMM) arithmetic at twice the rate of
// 256-bit: true for AVX-512 machines other than AMD Zen 4 (family 25), which splits each
// ZMM operation into two 256-bit halves (AMD Zen 5, family 26, has 512-bit datapaths).
// The float32 products of more than nine inputs choose their micro-kernel by it
// (gemmShapeFor), and the batched k-quant products when a partial tile repays its cost
// (tileMinLanes).
// No CPUID bit states the width, so the family decides; an unknown AVX-512 CPU is taken to
// be full width, as Intel's server parts with two 512-bit FMA units are.
var zmmFullWidth = cpuFeatures&featAVX512F != 0 && !isAMDFamily(0x19)

// isAMDFamily reports whether this is an AMD CPU of the given family (the base family
// plus the extended family, as AMD numbers them: 0x19 Zen 3 and Zen 4, 0x1A Zen 5).
func isAMDFamily(family uint32) bool {
	_, b, c, d := cpuid(0, 0)
	if b != 0x68747541 || d != 0x69746e65 || c != 0x444d4163 { // "AuthenticAMD"
		return false
	}
	a, _, _, _ := cpuid(1, 0)
	f := a >> 8 & 0xf
	if f == 0xf {
		f += a >> 20 & 0xff
	}
	return f == family
}

// zmmWidthDetail is the report's detail for the AVX-512 float32 products: which
// micro-kernel batches of more than nine take on this CPU (zmmFullWidth).
func zmmWidthDetail() string {
	if zmmFullWidth {
		return "512-bit arithmetic at full width: float32 batches of 8 or more in gemm4x8AVX512 (ZMM pairs), prefill inputs of 768 columns or more packed once and broadcast (gemm8x6BAVX512)"
	}
	return "512-bit arithmetic in 256-bit halves (AMD family 25): float32 batches of 10 to 47 in gemm4x6AVX512 (YMM), prefill inputs packed twice (gemm8x6AVX512)"
}

// kTileDetail is the report's detail for the batched k-quant products: from how many
// vectors past the whole tiles a partial tile is used on this CPU (tileMinLanes).
func kTileDetail() string {
	return fmt.Sprintf("vectors past the whole tiles of 16 fill a tile from %d on", tileMinLanes())
}

// kRowsDetail is the report's detail for the k-quant row dots: which Q4_K kernel the CPU's
// ZMM width chose.
func kRowsDetail() string {
	if zmmFullWidth {
		return "Q4_K rows in 512-bit registers (dotQ4_Kx4ZAVX512), Q4_K and Q5_K batches below a tile two vectors at a time (dotQ4_Kx2x2ZAVX512, dotQ5_Kx2x2AVX512)"
	}
	return "Q4_K rows in 256-bit registers (dotQ4_Kx4AVX512)"
}
