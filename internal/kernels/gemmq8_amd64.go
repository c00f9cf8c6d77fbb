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

// gemmQ4_0x2x4VNNI is gemmQ8x2x4VNNI for Q4_0 rows (18 bytes a block), with the legacy
// row dots' VPERMW table for Q4_0 at idx: the same products of the same codes less 8, so
// the same bits as the rows rewritten as Q8_0 (q4_0AsQ8_0) give. Implemented in
// gemmq8_avx512_amd64.s.
//
//go:noescape
func gemmQ4_0x2x4VNNI(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, acc *float32, flags int, idx *[256]byte)

// gemmQ5_0x2x4VNNI is gemmQ4_0x2x4VNNI for Q5_0 rows (22 bytes a block, the fifth bits
// added from qh through a mask), with the legacy row dots' table for Q5_0 at idx.
// Implemented in gemmq8_avx512_amd64.s.
//
//go:noescape
func gemmQ5_0x2x4VNNI(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, acc *float32, flags int, idx *[256]byte)

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
	tileEnd := end // rows [start, tileEnd) go through the batched kernel
	s := gemmBuffers.Get().(*gemmScratch)
	defer gemmBuffers.Put(s)
	s.acc = grow(s.acc, 64*gemmQ8Rows) // the accumulators carried from chunk to chunk
	if vnni {
		tileEnd = start + (end-start)&^1
		gemmQ8TilesVNNI(gemmQ8x2x4VNNI, Q8_0BlockBytes, out, w, x, rows, rb, start, tileEnd, s.acc)
	} else {
		gemmQ8TilesAVX2(out, w, x, rows, rb, start, end, s)
	}
	if tileEnd < end { // the last row of an odd count, for the vectors in groups
		for b := range 4 * groups {
			dotQ8_0Q8Rows(out[b*rows+tileEnd:b*rows+end], x.in[b], w[tileEnd*rb:end*rb], rb)
		}
	}
	matMulQ8_0Rows(out, w, x, rows, rb, start, end, 4*groups)
}

// gemmQ8TilesAVX2 runs the rows [start, end) through gemmQ8x1x4AVX2 against every group
// of four vectors of x, gemmQ8Rows rows at a time and in chunks of at most
// gemmQ8ChunkBlocks blocks, with s's panel for the scale products and its acc for the
// carried accumulators; row r of vector v goes to out[v·stride + r].
func gemmQ8TilesAVX2(out []float32, w []byte, x *Q8Batch, stride, rb, start, end int, s *gemmScratch) {
	nb := x.n / QBlockLen
	gb := q8GroupBytes(x.n)
	chunk := gemmQ8Chunk(nb, gemmQ8ChunkBlocks)
	s.panel = grow(s.panel, 4*chunk)
	for r0 := start; r0 < end; r0 += gemmQ8Rows {
		r1 := min(r0+gemmQ8Rows, end)
		for g := range len(x.in) / 4 {
			for c0 := 0; c0 < nb; c0 += chunk {
				c1 := min(c0+chunk, nb)
				gemmQ8x1x4AVX2(&out[4*g*stride+r0], stride, &w[r0*rb+c0*Q8_0BlockBytes], rb, &x.packed[g*gb+c0/2*768], c1-c0, r1-r0,
					&x.scales[4*(g*nb+c0)], &s.panel[0], &s.acc[0], gemmChunkFlags(c0, c1, nb))
			}
		}
	}
}

// q8TileKernel is a VNNI tile kernel's signature: gemmQ8x2x4VNNI's.
type q8TileKernel func(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, acc *float32, flags int)

// gemmQ8TilesVNNI runs the pairs of rows [start, end) (an even count) of rows of
// blockBytes-byte blocks, rb bytes each, through kernel against every group of four
// vectors of x, gemmQ8Rows rows at a time and in chunks of at most gemmQ8ChunkBlocksVNNI
// blocks (each a pair of blocks' 768 bytes on in the packed group), carrying the
// accumulators in acc (64·gemmQ8Rows floats); row r of vector v goes to out[v·stride + r].
func gemmQ8TilesVNNI(kernel q8TileKernel, blockBytes int, out []float32, w []byte, x *Q8Batch, stride, rb, start, end int, acc []float32) {
	nb := x.n / QBlockLen
	gb := q8GroupBytes(x.n)
	chunk := gemmQ8Chunk(nb, gemmQ8ChunkBlocksVNNI)
	for r0 := start; r0 < end; r0 += gemmQ8Rows {
		r1 := min(r0+gemmQ8Rows, end)
		for g := range len(x.in) / 4 {
			for c0 := 0; c0 < nb; c0 += chunk {
				c1 := min(c0+chunk, nb)
				kernel(&out[4*g*stride+r0], stride, &w[r0*rb+c0*blockBytes], rb, &x.packed[g*gb+c0/2*768], c1-c0, (r1-r0)/2,
					&acc[0], gemmChunkFlags(c0, c1, nb))
			}
		}
	}
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

// legacyDirectKernels are the VNNI kernels that multiply legacy rows where they lie.
var legacyDirectKernels = map[*legacyFormat]func(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, acc *float32, flags int, idx *[256]byte){
	&lQ4_0: gemmQ4_0x2x4VNNI,
	&lQ5_0: gemmQ5_0x2x4VNNI,
}

// dotLegacyBatchDirect multiplies Q4_0 or Q5_0 rows by the batch where they lie, with
// gemmQ4_0x2x4VNNI or gemmQ5_0x2x4VNNI, when they are on and the batch has a group of
// four vectors and at most legacyDirectMaxBatch[f]; the last row of an odd count and the
// vectors after the groups go through the row dots. It reports whether it did: otherwise
// the rows are rewritten as Q8_0, or multiplied in row dots (dotLegacyBatch).
func dotLegacyBatchDirect(f *legacyFormat, out []float32, stride int, x *Q8Batch, w []byte, rows int) bool {
	nb, groups := x.n/QBlockLen, len(x.in)/4
	direct, ok := legacyDirectKernels[f]
	if !ok || !implLegacyGemmVNNI.on || nb == 0 || groups == 0 || len(x.in) > legacyDirectMaxBatch[f] || overlapsRows(out, nil, w) {
		return false
	}
	rb := nb * f.blockBytes
	idx := legacyKernels[f].idx
	kernel := func(out *float32, outStride int, w *byte, rb int, xp *byte, nb, tiles int, acc *float32, flags int) {
		direct(out, outStride, w, rb, xp, nb, tiles, acc, flags, idx)
	}
	s := gemmBuffers.Get().(*gemmScratch)
	defer gemmBuffers.Put(s)
	s.acc = grow(s.acc, 64*gemmQ8Rows)
	pairsEnd := rows &^ 1
	gemmQ8TilesVNNI(kernel, f.blockBytes, out, w, x, stride, rb, 0, pairsEnd, s.acc)
	if pairsEnd < rows {
		for v := range 4 * groups {
			dotLegacyRows(f, out[v*stride+pairsEnd:v*stride+rows], x.in[v], w[pairsEnd*rb:rows*rb])
		}
	}
	legacyRowDots(f, out, stride, x, w, rows, 4*groups)
	return true
}
