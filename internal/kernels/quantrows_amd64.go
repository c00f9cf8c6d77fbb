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

// forRowQuarters drives a four-row kernel over rows rows of rb bytes: run(r, q·rb, q) for
// r = 0..q-1, q = rows/4, so that each call takes rows r, r+q, r+2q and r+3q (the quarters
// of the rows side by side, as four sequential streams); then run(r, 0, 0) for each row r
// left over, the same kernel with all four rows the same.
func forRowQuarters(rows, rb int, run func(r, stride, outStride int)) {
	q := rows / 4
	for r := 0; r < q; r++ {
		run(r, q*rb, q)
	}
	for r := 4 * q; r < rows; r++ {
		run(r, 0, 0)
	}
}
