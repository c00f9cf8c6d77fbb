//go:build amd64 && !purego

package kernels

import "unsafe"

// The k-quant row dots run in assembly on CPUs with AVX-512 VNNI (kquant_avx512_amd64.s,
// the same features as the Q8_0 × Q8_0 kernel: implKRowsVNNI) and on those with AVX2 and F16C
// (kquant_avx2_amd64.s: useRowAVX2), four rows at a time, the quarters of the rows side by
// side as four sequential streams.

// kx4Kernel sets out[k·outStride] to the dot of the row at w + k·stride bytes with the
// input's super-blocks at x, for k = 0..3; nb > 0 super-blocks per row.
type kx4Kernel func(out *float32, w *byte, x *byte, nb, stride, outStride int)

// dotQ4_Kx4AVX512 is the Q4_K kernel (kquant_avx512_amd64.s).
//
//go:noescape
func dotQ4_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)

// dotQ4_Kx4ZAVX512 is dotQ4_Kx4AVX512 in 512-bit registers (kquant_avx512_amd64.s), for
// CPUs whose 512-bit arithmetic is full width: dotQ4_Kx4AVX512 keeps to 256 bits because
// Zen 4 splits each 512-bit instruction in two.
//
//go:noescape
func dotQ4_Kx4ZAVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)

// dotQ4_Kx4AVX512Width runs dotQ4_Kx4ZAVX512 where ZMM is full width (zmmFullWidth) and
// dotQ4_Kx4AVX512 elsewhere: the same integers and float steps, so the same bits.
func dotQ4_Kx4AVX512Width(out *float32, w *byte, x *byte, nb, stride, outStride int) {
	if zmmFullWidth {
		dotQ4_Kx4ZAVX512(out, w, x, nb, stride, outStride)
		return
	}
	dotQ4_Kx4AVX512(out, w, x, nb, stride, outStride)
}

// dotQ6_Kx4AVX512 is the Q6_K kernel (kquant_avx512_amd64.s).
//
//go:noescape
func dotQ6_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)

// dotQ5_Kx4AVX512 is the Q5_K kernel (kquant_avx512_amd64.s).
//
//go:noescape
func dotQ5_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)

// dotQ4_Kx4AVX2, dotQ5_Kx4AVX2, dotQ6_Kx4AVX2, dotQ2_Kx4AVX2 and dotQ3_Kx4AVX2 are the
// AVX2 kernels
// (kquant_avx2_amd64.s), for CPUs without AVX-512 VNNI.
//
//go:noescape
func dotQ4_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)

//go:noescape
func dotQ5_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)

//go:noescape
func dotQ6_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)

//go:noescape
func dotQ2_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)

//go:noescape
func dotQ3_Kx4AVX2(out *float32, w *byte, x *byte, nb, stride, outStride int)

// dotQ2_Kx4AVX512 and dotQ3_Kx4AVX512 are the Q2_K and Q3_K kernels
// (kquant_avx512_amd64.s).
//
//go:noescape
func dotQ2_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)

//go:noescape
func dotQ3_Kx4AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int)

// kKernels pairs each k-quant format with its AVX-512 and AVX2 kernels.
var kKernels = map[*kFormat]x4Kernels[kx4Kernel]{
	&kQ2_K: {dotQ2_Kx4AVX512, dotQ2_Kx4AVX2},
	&kQ3_K: {dotQ3_Kx4AVX512, dotQ3_Kx4AVX2},
	&kQ4_K: {dotQ4_Kx4AVX512Width, dotQ4_Kx4AVX2},
	&kQ5_K: {dotQ5_Kx4AVX512, dotQ5_Kx4AVX2},
	&kQ6_K: {dotQ6_Kx4AVX512, dotQ6_Kx4AVX2},
}

func dotKRowsFast(f *kFormat, out []float32, x *Q8KInput, w []byte, rb int) {
	kernel, ok := kKernels[f].pick(implKRowsVNNI, implKRowsAVX2)
	if !ok || len(out) == 0 || overlapsRows(out, nil, w) {
		kRowsGeneric(f, out, x, w, rb)
		return
	}
	nb, xb := x.n/KBlockLen, unsafe.SliceData(x.blocks)
	forRowQuarters(len(out), rb, func(r, stride, outStride int) {
		kernel(&out[r], &w[r*rb], xb, nb, stride, outStride)
	})
}

// quantizeQ8KAVX512 is quantizeQ8KGeneric for nb > 0 super-blocks of x, writing them at
// dst (q8k_avx512_amd64.s).
//
//go:noescape
func quantizeQ8KAVX512(x *float32, nb int, dst *byte)

// quantizeQ8KAVX2 is quantizeQ8KAVX512 with AVX2, the same bytes (q8k_avx2_amd64.s).
//
//go:noescape
func quantizeQ8KAVX2(x *float32, nb int, dst *byte)

func quantizeQ8K(v *Q8KInput, x []float32) {
	nb := len(x) / KBlockLen
	switch {
	case nb > 0 && implQuantizeQ8KVNNI.on:
		quantizeQ8KAVX512(&x[0], nb, &v.blocks[0])
	case nb > 0 && implQuantizeQ8KAVX2.on:
		quantizeQ8KAVX2(&x[0], nb, &v.blocks[0])
	default:
		quantizeQ8KGeneric(v, x)
	}
}
