//go:build amd64 && !purego

package kernels

import "unsafe"

// The Q8_0 × Q8_0 kernels (registry.go): on CPUs with AVX-512 VNNI, dotQ8_0Q8x4AVX512
// (q8input_avx512_amd64.s) does the integer products with VPDPBUSD four rows at a time
// and needs VNNI, BW (VPERMW), DQ (VINSERTI32X8), VL (the 256-bit forms for an odd last
// block) and F16C (VCVTPH2PS); quantizeQ8AVX512 quantizes the input with the same
// features. On CPUs with AVX2 and F16C but not VNNI, dotQ8_0Q8AVX2 (q8input_avx2_amd64.s) does
// the integer products with ggml's sign trick (VPABSB, VPSIGNB, VPMADDUBSW), four rows at a time
// (dotQ8_0Q8x4AVX2: the quarters of the rows side by side, prefetched into L2), or a row at
// a time (dotQ8_0Q8AVX2) when out overlaps the weights or there are fewer than four rows.

func dotQ8_0Q8Rows(out []float32, x *Q8Input, w []byte, rb int) {
	nb, q := x.n/QBlockLen, len(out)/4
	if nb > 0 && !implQ8Q8VNNI.on && implQ8Q8AVX2.on {
		xq, dl := unsafe.SliceData(x.qs), unsafe.SliceData(x.dLanes)
		if q == 0 || overlapsRows(out, nil, w) {
			for r := range out {
				out[r] = dotQ8_0Q8AVX2(&w[r*rb], xq, dl, nb)
			}
			return
		}
		_ = w[4*q*rb-1]
		forRowQuarters(len(out), rb, func(r, stride, outStride int) {
			dotQ8_0Q8x4AVX2(&out[r], &w[r*rb], xq, dl, nb, stride, outStride)
		})
		return
	}
	if !implQ8Q8VNNI.on || nb == 0 || len(out) == 0 || overlapsRows(out, nil, w) {
		q8RowsGeneric(out, x, w, rb)
		return
	}
	_ = w[len(out)*rb-1]
	xq, corr, dl := unsafe.SliceData(x.qs), unsafe.SliceData(x.corr), unsafe.SliceData(x.dLanes)
	// The four quarters of the rows are read side by side, a row of each at a time: four
	// long sequential streams.
	for r := 0; r < q; r++ {
		dotQ8_0Q8x4AVX512(&out[r], &w[r*rb], xq, corr, dl, nb, q*rb, q)
	}
	// The rows left over (all of them when there are fewer than four) go through the same
	// kernel with all four rows the same: a batched product's odd last row went through
	// the portable Go for every vector, a fifth of a Q4_0 prefill's time.
	for r := 4 * q; r < len(out); r++ {
		dotQ8_0Q8x4AVX512(&out[r], &w[r*rb], xq, corr, dl, nb, 0, 0)
	}
}

// dotQ8_0Q8x4AVX512 sets out[k·outStride] = DotQ8_0Q8 of the row at w + k·stride bytes, for
// k = 0..3, with the input's values at xq, its correction terms at corr and its scales,
// eight to a block, at dl; nb > 0 blocks per row. Implemented in q8input_avx512_amd64.s.
//
//go:noescape
func dotQ8_0Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl *float32, nb, stride, outStride int)

// dotQ8_0Q8x4AVX2 sets out[k·outStride] = dotQ8_0Q8AVX2 of the row at w + k·stride bytes,
// for k = 0..3, bit for bit (the same instructions per row). Implemented in q8input_avx2_amd64.s.
//
//go:noescape
func dotQ8_0Q8x4AVX2(out *float32, w *byte, xq *int8, dl *float32, nb, stride, outStride int)

// dotQ8_0Q8AVX2 returns DotQ8_0Q8 of the Q8_0 row at w (nb > 0 blocks) with the input's
// codes at xq and its scales, eight to a block, at dl. Implemented in q8input_avx2_amd64.s.
//
//go:noescape
func dotQ8_0Q8AVX2(w *byte, xq *int8, dl *float32, nb int) float32

// quantizeQ8AVX512 is quantizeBlocksGeneric for nb > 0 blocks of x, writing qs, d, dLanes,
// corr and amax at the given pointers. Implemented in q8input_avx512_amd64.s.
//
//go:noescape
func quantizeQ8AVX512(x *float32, nb int, qs *int8, d, dLanes *float32, corr *int32, amax *float32)

// quantizeQ8AVX2 is quantizeQ8AVX512 with AVX2 and F16C, the same bytes. Implemented in
// q8input_avx2_amd64.s.
//
//go:noescape
func quantizeQ8AVX2(x *float32, nb int, qs *int8, d, dLanes *float32, corr *int32, amax *float32)

func quantizeBlocks(v *Q8Input, x []float32) {
	nb := len(x) / QBlockLen
	switch {
	case nb == 0:
		quantizeBlocksGeneric(v, x)
	case implQuantizeQ8VNNI.on:
		quantizeQ8AVX512(&x[0], nb, &v.qs[0], &v.d[0], &v.dLanes[0], &v.corr[0], &v.amax[0])
	case implQuantizeQ8AVX2.on:
		quantizeQ8AVX2(&x[0], nb, &v.qs[0], &v.d[0], &v.dLanes[0], &v.corr[0], &v.amax[0])
	default:
		quantizeBlocksGeneric(v, x)
	}
}
