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

// kPairKernel is the kernel that takes format f's row dots two vectors at a time here, or
// nil (dotKRowsPairFast): Q4_K and Q5_K where ZMM arithmetic is full width. There they also
// take the vectors that the AVX2 kernels took four at a time (dotQ4_KV4AVX2,
// dotQ4_KV8AVX2) below a tile. One thread on Zen 5, rows from memory, the two alternated
// call by call (medians of 15, GB/s of Q4_K rows, before → pairs), 2048×2048 by 2 16.6 →
// 21.6, by 3 11.8 → 13.6, by 4 (before: dotQ4_KV4AVX2) 9.1 → 9.7, by 6 5.5 → 6.0;
// 2048×5632 by 2 15.0 → 21.1, by 4 5.9 → 11.2, by 6 5.5 → 7.7; 5632×2048 by 4 9.0 → 11.0;
// Q5_K (before: dotQ5_KV4AVX2, dotQ5_KV8AVX2 from four on) 2048×2048 by 2 14.8 → 22.3, by 4
// 9.8 → 11.7, by 6 6.5 → 8.2, 2048×5632 by 2 12.7 → 20.3, by 4 10.3 → 11.4.
func kPairKernel(f *kFormat) func(out *float32, w *byte, x *byte, nb, stride, outStride int, x2 *byte, vecStride int) {
	if !zmmFullWidth || !implKRowsVNNI.on {
		return nil
	}
	switch f {
	case &kQ4_K:
		return dotQ4_Kx2x2ZAVX512
	case &kQ5_K:
		return dotQ5_Kx2x2AVX512
	}
	return nil
}

// dotQ4_Kx2x2ZAVX512 is dotQ4_Kx4ZAVX512 for two rows (w, w+stride) against two inputs (x,
// x2): row k and x to out[k·outStride], row k and x2 to out[vecStride + k·outStride]. Each
// super-block is unpacked once for both inputs. dotQ5_Kx2x2AVX512 is the same for Q5_K
// (dotQ5_Kx4AVX512's bits). Implemented in kquant_avx512_amd64.s.
//
//go:noescape
func dotQ4_Kx2x2ZAVX512(out *float32, w *byte, x *byte, nb, stride, outStride int, x2 *byte, vecStride int)

//go:noescape
func dotQ5_Kx2x2AVX512(out *float32, w *byte, x *byte, nb, stride, outStride int, x2 *byte, vecStride int)

// dotKRowsPairFast is dotKRows of the rows w against x1 into out[:rows] and against x2 into
// out[vecStride:vecStride+rows] at once, where a kernel takes the pair (kPairKernel; the
// rows in two halves side by side, a row left over paired with itself). The same bits as
// two dotKRows. It reports false, having run nothing, elsewhere. A batch of two sequences
// on Zen 5 otherwise cost two batch-1 products: each input unpacked every super-block
// again.
func dotKRowsPairFast(f *kFormat, out []float32, vecStride int, x1, x2 *Q8KInput, w []byte, rows int) bool {
	kernel := kPairKernel(f)
	if kernel == nil || rows == 0 || x1.n != x2.n || vecStride < rows || len(out) < vecStride+rows {
		return false
	}
	w, rb, ok := quantizedRows(f.name, "Rows", out[:rows], w, x1.n, KBlockLen, f.blockBytes)
	if !ok || overlapsRows(out[:vecStride+rows], nil, w) {
		return false
	}
	nb, xb1, xb2 := x1.n/KBlockLen, unsafe.SliceData(x1.blocks), unsafe.SliceData(x2.blocks)
	h := rows / 2
	for r := range h {
		kernel(&out[r], &w[r*rb], xb1, nb, h*rb, h, xb2, vecStride)
	}
	if rows%2 == 1 {
		r := rows - 1
		kernel(&out[r], &w[r*rb], xb1, nb, 0, 0, xb2, vecStride)
	}
	return true
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
