//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

//go:noescape
func fmaPeakAVX2(iters int)

//go:noescape
func mulAddPeakAVX(iters int)

// PeakLoops reports the register-only loops this build has for measuring the machine's
// arithmetic peak, and runs them: fma(iters) performs 192·iters flops as fused multiply-adds,
// mulAdd(iters) 96·iters flops as the separate multiply and add the kernels use. A nil
// function means the loop is not available (no FMA/AVX, or a purego build).
func PeakLoops() (fma, mulAdd func(iters int), fmaFlops, mulAddFlops int) {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		fma = fmaPeakAVX2
	}
	if cpu.X86.HasAVX {
		mulAdd = mulAddPeakAVX
	}
	return fma, mulAdd, 192, 96
}
