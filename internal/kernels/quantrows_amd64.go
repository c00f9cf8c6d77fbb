//go:build amd64 && !purego

package kernels

// x4Kernels are a quantized format's four-row kernels: the AVX-512 (VNNI) one and the
// AVX2 one.
type x4Kernels[K any] struct{ avx512, avx2 K }

// pick returns the kernel the CPU runs now: avx512 when impl512 is on, else avx2 when
// impl2 is on; ok is false when neither is (the portable loop runs instead).
func (k x4Kernels[K]) pick(impl512, impl2 *impl) (kernel K, ok bool) {
	switch {
	case impl512.on:
		return k.avx512, true
	case impl2.on:
		return k.avx2, true
	}
	return kernel, false
}
