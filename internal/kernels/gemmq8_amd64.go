//go:build amd64 && !purego

package kernels

// gemmQ8x2x4VNNI runs tiles pairs of Q8_0 rows (rb bytes each, one after the other from
// w) against a group of four vectors packed by packQ8Vector at xp, nb > 0 blocks each,
// writing row k of vector j to out[j·outStride+k]. Implemented in gemmq8_avx512_amd64.s.
//
//go:noescape
func gemmQ8x2x4VNNI(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int)

// gemmQ8x1x4AVX2 is gemmQ8x2x4VNNI one row at a time with AVX2 (VPMADDUBSW and VPMADDWD
// instead of VPDPBUSD), taking the vectors' block scales four to a block from scales (the
// group's part of Q8Batch.scales) and using tab (4·nb floats) as scratch for each row's
// scale products. Implemented in gemmq8_amd64.s.
//
//go:noescape
func gemmQ8x1x4AVX2(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, scales, tab *float32)

// gemmQ8Rows is how many rows matMulQ8_0 takes at a time: a block of rows (at most 32 ·
// 34/32 bytes per value, 68 KiB for 2048 columns) stays in the core's L2 cache while every
// group of vectors meets it.
const gemmQ8Rows = 32

func matMulQ8_0(out []float32, w []byte, x *Q8Batch, rows, rb, start, end int) {
	nb := x.n / QBlockLen
	groups := len(x.in) / 4
	vnni, avx2 := implQ8GemmVNNI.on, implQ8GemmAVX2.on
	if !vnni && !avx2 || nb == 0 || groups == 0 || start == end || overlapsRows(out, nil, w) {
		matMulQ8_0Rows(out, w, x, rows, rb, start, end, 0)
		return
	}
	gb := q8GroupBytes(x.n)
	tileEnd := end // rows [start, tileEnd) go through the batched kernel
	var tab []float32
	if vnni {
		tileEnd = start + (end-start)&^1
	} else {
		tab = make([]float32, 4*nb)
	}
	for r0 := start; r0 < tileEnd; r0 += gemmQ8Rows {
		r1 := min(r0+gemmQ8Rows, tileEnd)
		for g := range groups {
			if vnni {
				gemmQ8x2x4VNNI(&out[4*g*rows+r0], rows, &w[r0*rb], rb, &x.packed[g*gb], nb, (r1-r0)/2)
			} else {
				gemmQ8x1x4AVX2(&out[4*g*rows+r0], rows, &w[r0*rb], rb, &x.packed[g*gb], nb, r1-r0, &x.scales[4*g*nb], &tab[0])
			}
		}
	}
	if tileEnd < end { // the last row of an odd count, for the vectors in groups
		for b := range 4 * groups {
			dotQ8_0Q8Rows(out[b*rows+tileEnd:b*rows+end], x.in[b], w[tileEnd*rb:end*rb], rb)
		}
	}
	matMulQ8_0Rows(out, w, x, rows, rb, start, end, 4*groups)
}

// matMulQ8_0Rows multiplies the vectors from b0 on one at a time with DotQ8_0Q8Rows's
// kernels.
func matMulQ8_0Rows(out []float32, w []byte, x *Q8Batch, rows, rb, start, end, b0 int) {
	for b := b0; b < len(x.in); b++ {
		dotQ8_0Q8Rows(out[b*rows+start:b*rows+end], x.in[b], w[start*rb:end*rb], rb)
	}
}
