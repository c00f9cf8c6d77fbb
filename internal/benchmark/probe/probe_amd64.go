//go:build amd64 && !purego

package probe

import "github.com/kvref/kvref/internal/kernels"

//go:noescape
func fmaPeakAVX2(iters int)

//go:noescape
func mulAddPeakAVX(iters int)

// PeakLoops reports the register-only loops this build has for measuring the machine's
// arithmetic peak, in the widest vectors the kernels may use now (512-bit with AVX-512F,
// else 256-bit; Restrict("avx2") gives the 256-bit loops):
// fma(iters) performs fmaFlops·iters flops as fused multiply-adds, mulAdd(iters)
// mulAddFlops·iters flops as the separate multiply and add the kernels use; bits names
// the vector width. A nil function means the loop is not available (no FMA/AVX, or a
// purego build).
func PeakLoops() (fma, mulAdd func(iters int), fmaFlops, mulAddFlops, bits int) {
	if kernels.Enabled("AVX-512F") && kernels.Enabled("FMA") {
		return fmaPeakAVX512, mulAddPeakAVX512, 384, 384, 512
	}
	if kernels.Enabled("AVX2") && kernels.Enabled("FMA") {
		fma = fmaPeakAVX2
	}
	if kernels.Enabled("AVX") {
		mulAdd = mulAddPeakAVX
	}
	return fma, mulAdd, 192, 192, 256
}

// Int8PeakLoop reports the register-only loop this build has for measuring the machine's
// peak rate of int8 multiply-adds, the arithmetic of the quantized weights' products
// (VPDPBUSD on 512 bits with AVX-512 VNNI, else VPMADDUBSW and VPMADDWD on 256 bits with
// AVX2): loop(iters) performs ops·iters operations, a multiply-add of a byte pair counted
// as two, so that the rate compares with a prefill's flops; what names the instructions.
// A nil loop means there is none (no AVX2, or a purego build).
func Int8PeakLoop() (loop func(iters int), ops int, what string) {
	if kernels.Enabled("AVX-512F") && kernels.Enabled("AVX-512 VNNI") {
		return int8PeakVNNI, 1536, "512-bit VPDPBUSD"
	}
	if kernels.Enabled("AVX2") {
		return int8PeakAVX2, 512, "256-bit VPMADDUBSW+VPMADDWD"
	}
	return nil, 0, ""
}

//go:noescape
func int8PeakVNNI(iters int)

//go:noescape
func int8PeakAVX2(iters int)

//go:noescape
func fmaPeakAVX512(iters int)

//go:noescape
func mulAddPeakAVX512(iters int)

// StreamRead reads every element of x as fast as the machine allows and returns a value
// that depends on all of them (their sum, in no promised order), so that the read cannot
// be optimised away: the memory-bandwidth probe of kvref bench --roofline, not a numeric
// kernel. With AVX it reads four streams at once with eight independent vector additions
// straight from memory.
func StreamRead(x []float32) float32 {
	var s float32
	if kernels.Enabled("AVX") && len(x) >= 4*16 {
		// Four streams (the quarters of x) at once: one stream per core does not keep
		// enough reads in flight to reach the memory's bandwidth.
		q := len(x) / 4 &^ 15
		s = streamRead4AVX(&x[0], q/16, 4*q)
		s += streamReadGeneric(x[4*q:])
		return s
	}
	return streamReadGeneric(x)
}

//go:noescape
func streamRead4AVX(p *float32, blocks, stride int) float32
