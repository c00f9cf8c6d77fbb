//go:build amd64 && !purego

package kernels

// gemmQ8x2x4VNNI runs tiles pairs of Q8_0 rows (rb bytes apart, one pair after the other
// from w) against a group of four vectors packed by packQ8Vector at xp, over nb > 0 blocks
// that may be one chunk of longer rows, writing row k of vector j to out[j·outStride+k].
// With gemmAccLoad its accumulators start from acc (128 floats a pair of rows) instead of
// zero; with gemmAccStore they go back there for the next chunk instead of to out.
// Implemented in gemmq8_avx512_amd64.s.
//
//go:noescape
func gemmQ8x2x4VNNI(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, acc *float32, flags int)

// gemmQ8x1x4AVX2 is gemmQ8x2x4VNNI one row at a time with AVX2 (VPMADDUBSW and VPMADDWD
// instead of VPDPBUSD), over nb blocks that may be one chunk of longer rows (rb bytes
// apart), taking the vectors' block scales four to a block from scales (the chunk's part
// of Q8Batch.scales) and using tab (4·nb floats) as scratch for each row's scale products.
// With gemmAccLoad its accumulators start from acc (64 floats a row) instead of zero; with
// gemmAccStore they go back there for the next chunk instead of to out. Implemented in
// gemmq8_avx2_amd64.s.
//
//go:noescape
func gemmQ8x1x4AVX2(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, scales, tab, acc *float32, flags int)

// gemmQ8ChunkBlocks bounds the blocks gemmQ8x1x4AVX2 takes at a time: it reads its four
// inputs' values again for every row, so they must stay in the L1 data cache (32 KiB on
// AMD Zen 3 and 4) beside the row and its scale products. Rows of more blocks go in even
// chunks (whole pairs of blocks, the odd last block in the last chunk) of at most
// gemmQ8ChunkBlocks, the accumulators carried from one to the next in order, which changes
// no bit. One thread on Zen 4 at avx2, 2048 × 5632 by 64 (176 blocks, 22 KiB of values
// per group): 66-70 cpu-GFLOP/s whole, against 84 for 2048 × 2048.
const gemmQ8ChunkBlocks = 96

// gemmQ8ChunkBlocksVNNI is gemmQ8ChunkBlocks for gemmQ8x2x4VNNI, which keeps its inputs'
// correction terms and scales beside their values (768 bytes a pair of blocks, 24 KiB for
// 64 blocks). One thread on Zen 5, `go test ./internal/kernels -bench
// DotQ8_0Batch/.*/batched/avx512`: 2048 × 5632 by 64 (176 blocks, 66 KiB a group) 96–97
// cpu-GFLOP/s whole, 147–148 in chunks of 64 (or fewer) blocks, against 154–171 for 2048 ×
// 2048.
const gemmQ8ChunkBlocksVNNI = 64

// gemmQ8Chunk is how many blocks of a row of nb a kernel that takes at most limit at a
// time takes: an even number unless it is nb.
func gemmQ8Chunk(nb, limit int) int {
	if nb <= limit {
		return nb
	}
	n := (nb + limit - 1) / limit
	return ((nb+n-1)/n + 1) &^ 1
}

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
	s := gemmBuffers.Get().(*gemmScratch)
	defer gemmBuffers.Put(s)
	s.acc = grow(s.acc, 64*gemmQ8Rows) // the accumulators carried from chunk to chunk
	chunk := gemmQ8Chunk(nb, gemmQ8ChunkBlocks)
	if vnni {
		tileEnd = start + (end-start)&^1
		chunk = gemmQ8Chunk(nb, gemmQ8ChunkBlocksVNNI)
	} else {
		s.panel = grow(s.panel, 4*chunk) // the AVX2 kernel's scale products
		tab = s.panel
	}
	acc := s.acc
	for r0 := start; r0 < tileEnd; r0 += gemmQ8Rows {
		r1 := min(r0+gemmQ8Rows, tileEnd)
		for g := range groups {
			// The rows in chunks of blocks, each a pair of blocks' 768 bytes on in the
			// packed group.
			for c0 := 0; c0 < nb; c0 += chunk {
				c1 := min(c0+chunk, nb)
				o, wc, xc, flags := &out[4*g*rows+r0], &w[r0*rb+c0*Q8_0BlockBytes], &x.packed[g*gb+c0/2*768], gemmChunkFlags(c0, c1, nb)
				if vnni {
					gemmQ8x2x4VNNI(o, rows, wc, rb, xc, c1-c0, (r1-r0)/2, &acc[0], flags)
					continue
				}
				gemmQ8x1x4AVX2(o, rows, wc, rb, xc, c1-c0, r1-r0, &x.scales[4*(g*nb+c0)], &tab[0], &acc[0], flags)
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
// kernels, a panel of rows (batchPanelBytes) at a time.
func matMulQ8_0Rows(out []float32, w []byte, x *Q8Batch, rows, rb, start, end, b0 int) {
	panel := panelRows(rb)
	for r0 := start; r0 < end; r0 += panel {
		r1 := min(r0+panel, end)
		for b := b0; b < len(x.in); b++ {
			dotQ8_0Q8Rows(out[b*rows+r0:b*rows+r1], x.in[b], w[r0*rb:r1*rb], rb)
		}
	}
}
