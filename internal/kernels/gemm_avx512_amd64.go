//go:build amd64 && !purego

package kernels

import "unsafe"

// gemm8x6AVX512 runs tiles groups of eight rows, laid out in pairs by
// interleavePairsAVX512 (the groups one after the other from panel, 8n floats each),
// against six input vectors duplicated by packInputsDup into xd, over n columns (a positive
// multiple of 8): row k of group t and input j goes to out[j·outStride + 8t + k] for the
// rows k in mask (0xff: all eight; a partial last group of a panel is padded with zero
// rows). Implemented in gemm_avx512_amd64.s.
//
//go:noescape
func gemm8x6AVX512(out *float32, outStride int, panel, xd *float32, n, tiles, mask int)

// gemm8x2AVX512 is gemm8x6AVX512 for two inputs, input 0's rows stored under mask0 and
// input 1's under mask1 (0 when input 1 is padding).
//
//go:noescape
func gemm8x2AVX512(out *float32, outStride int, panel, xd *float32, n, tiles, mask0, mask1 int)

// gemm8x6BAVX512 and gemm8x2BAVX512 are gemm8x6AVX512 and gemm8x2AVX512 for inputs packed
// once by packInputBlocks (8 floats per input and block of eight columns, not 16), each
// block broadcast to both halves of a register as it is loaded. Implemented in
// gemm_avx512_amd64.s.
//
//go:noescape
func gemm8x6BAVX512(out *float32, outStride int, panel, xb *float32, n, tiles, mask int)

//go:noescape
func gemm8x2BAVX512(out *float32, outStride int, panel, xb *float32, n, tiles, mask0, mask1 int)

// packInputBlocks packs the first k of slots input vectors at x (cols floats each,
// consecutive; cols a multiple of 8) for the broadcasting wide kernels into dst
// (slots·cols floats): per block of eight columns, each vector's block once, vector j at 8j
// of the block's 8·slots floats; the slots past k are zero. With AVX-512 on (always, where
// those kernels run) packInputBlocksAVX512 does it, a YMM copy a block: the Go loop took a
// tenth of a batched prefill's product time (16 sequences of 960 tokens, stories110M
// shape, on Zen 5).
func packInputBlocks(dst, x []float32, cols, k, slots int) {
	packInputsWith(packInputBlocksAVX512, packInputBlocksGeneric, dst[:slots*cols], x, cols, k, slots)
}

// packInputsWith runs a packing's assembly (fast, with AVX-512 on and cols > 0) or its
// portable definition on dst, already cut to the packing's length.
func packInputsWith(fast func(dst, x *float32, cols, k, slots int), generic func(dst, x []float32, cols, k, slots int), dst, x []float32, cols, k, slots int) {
	if implMatMulAVX512.on && cols > 0 {
		x = x[:k*cols]
		var xp *float32
		if k > 0 {
			xp = &x[0]
		}
		fast(&dst[0], xp, cols, k, slots)
		return
	}
	generic(dst, x, cols, k, slots)
}

// packInputBlocksAVX512 is packInputBlocksGeneric for cols > 0 with 256-bit copies.
// Implemented in gemm_avx512_amd64.s.
//
//go:noescape
func packInputBlocksAVX512(dst, x *float32, cols, k, slots int)

// packInputBlocksGeneric is the portable definition of packInputBlocks.
func packInputBlocksGeneric(dst, x []float32, cols, k, slots int) {
	dst = dst[:slots*cols]
	for b := 0; b < cols; b += 8 {
		d := dst[slots*b : slots*(b+8)]
		for j := range slots {
			var v [8]float32
			if j < k {
				v = *(*[8]float32)(x[j*cols+b:])
			}
			*(*[8]float32)(d[8*j:]) = v
		}
	}
}

// packInputsDup packs the first k of slots input vectors at x (cols floats each,
// consecutive; cols a multiple of 8) for the wide kernels into dst (2·slots·cols floats):
// per block of eight columns, each vector's block twice, vector j at 16j of the block's
// 16·slots floats; the slots past k are zero. With AVX-512 on (always, where the wide
// kernels run) packInputsDupAVX512 does it, a ZMM store a block: on Zen 5 the Go loop took
// a sixth of a stories110M-shape prefill's product time.
func packInputsDup(dst, x []float32, cols, k, slots int) {
	packInputsWith(packInputsDupAVX512, packInputsDupGeneric, dst[:2*slots*cols], x, cols, k, slots)
}

// packInputsDupAVX512 is packInputsDupGeneric for cols > 0 with VBROADCASTF32X8.
// Implemented in gemm_avx512_amd64.s.
//
//go:noescape
func packInputsDupAVX512(dst, x *float32, cols, k, slots int)

// packInputsDupGeneric is the portable definition of packInputsDup.
func packInputsDupGeneric(dst, x []float32, cols, k, slots int) {
	dst = dst[:2*slots*cols]
	for b := 0; b < cols; b += 8 {
		d := dst[2*slots*b : 2*slots*(b+8)]
		for j := range slots {
			var v [8]float32
			if j < k {
				v = *(*[8]float32)(x[j*cols+b:])
			}
			*(*[8]float32)(d[16*j:]) = v
			*(*[8]float32)(d[16*j+8:]) = v
		}
	}
}

// interleavePairsAVX512 writes the rows a and b (n floats each, n a positive multiple of
// 8) into dst (2n floats) side by side, block by block: dst[16i:16i+8] is a's block i,
// dst[16i+8:16i+16] b's. Implemented in gemm_avx512_amd64.s.
//
//go:noescape
func interleavePairsAVX512(dst, a, b *float32, n int)

// gemmWide512 is gemmAVX for large batches with AVX-512. Once per block of inputs
// (gemmInputSplit; one block unless the batch is large), the block's inputs are packed
// (packInputsDup, or packInputBlocks where wideInputsOnce; six at a time, the leftovers of
// the last block in twos), and the rows go in blocks of gemmRows, laid out in pairs
// (interleavePairsAVX512; decoded first, when decode is set) in a panel that stays in L2
// while every group of inputs meets it in gemm8x6AVX512 and gemm8x2AVX512 (or their B
// twins), eight rows at a time (the last group of a panel padded with zero rows, its
// stores masked). Every output keeps Dot's lanes and order, so the blocking changes no
// bit. The caller has checked the arguments.
func gemmWide512(out, w, x []float32, rows, cols, batch, start, end int, decode func(dst []float32, r int)) {
	s := gemmBuffers.Get().(*gemmScratch)
	defer gemmBuffers.Put(s)
	s.panel = growAligned(s.panel, gemmRows*cols)
	s.rows = grow(s.rows, 3*cols) // two decoded rows, then a row of zeros
	clear(s.rows[2*cols:])
	// Each input's floats in the packed block: twice, or once for the broadcasting kernels.
	pack, per, k6, k2 := packInputsDup, 2, gemm8x6AVX512, gemm8x2AVX512
	if wideInputsOnce(cols) {
		pack, per, k6, k2 = packInputBlocks, 1, gemm8x6BAVX512, gemm8x2BAVX512
	}
	full, step := gemmInputSplit(cols, batch, gemmPaired)
	for b0 := 0; ; b0 += step {
		b1 := min(b0+step, full)
		last := b1 == full
		groups := (b1 - b0) / gemmPaired.inputs
		pairs := 0 // the leftover inputs, two at a time, go with the last block
		if last {
			pairs = (batch - b1 + 1) / 2
		}
		s.packed = growAligned(s.packed, per*cols*(6*groups+2*pairs))
		for g := range groups {
			pack(s.packed[6*per*cols*g:], x[(b0+6*g)*cols:], cols, 6, 6)
		}
		for p := range pairs {
			b := b1 + 2*p
			pack(s.packed[per*cols*(6*groups+2*p):], x[b*cols:], cols, min(2, batch-b), 2)
		}
		for r0 := start; r0 < end; r0 += gemmRows {
			r1 := min(r0+gemmRows, end)
			panel := s.panel[:((r1-r0+7)&^7)*cols]
			for q := 0; 2*q < len(panel)/cols; q++ {
				a := gemmPanelRow(s, w, cols, r0+2*q, r1, decode, 0)
				b := gemmPanelRow(s, w, cols, r0+2*q+1, r1, decode, 1)
				interleavePairsAVX512(&panel[2*q*cols], &a[0], &b[0], cols)
			}
			tiles, part := (r1-r0)/8, (r1-r0)%8
			mask := 1<<part - 1
			for g := range groups {
				b, xp := b0+6*g, &s.packed[6*per*cols*g]
				if tiles > 0 {
					k6(&out[b*rows+r0], rows, &panel[0], xp, cols, tiles, 0xff)
				}
				if part > 0 {
					k6(&out[b*rows+r0+8*tiles], rows, &panel[8*tiles*cols], xp, cols, 1, mask)
				}
			}
			for p := range pairs {
				b, xp := b1+2*p, &s.packed[per*cols*(6*groups+2*p)]
				full1, mask1 := 0xff, mask // input b+1's masks: none when it is padding
				if b+1 == batch {
					full1, mask1 = 0, 0
				}
				if tiles > 0 {
					k2(&out[b*rows+r0], rows, &panel[0], xp, cols, tiles, 0xff, full1)
				}
				if part > 0 {
					k2(&out[b*rows+r0+8*tiles], rows, &panel[8*tiles*cols], xp, cols, 1, mask, mask1)
				}
			}
		}
		if last {
			break
		}
	}
}

// wideInputsOnce says whether gemmWide512 packs inputs of cols floats once and broadcasts
// each block as it loads it (gemm8x6BAVX512), rather than packing them twice for plain
// loads (gemm8x6AVX512): where ZMM arithmetic is full width (zmmFullWidth), for rows of at
// least wideOnceMinCols. A group of six inputs packed twice then takes most of L1 (36 KiB
// at 768 columns, of Zen 5's 48), so the inputs, read again for every group of eight rows,
// come from L2 and L3 and are the limit; shorter rows keep them in L1, where the plain
// loads are the faster. One thread on Zen 5, the two alternated call by call (medians of
// 9, cpu-GFLOP/s, dup → once): 768×2048 by 512 132.7–137.0 → 142.1–143.2, 768×1024 by 512
// 131.0–133.9 → 149.6–150.1, 2048×768 by 512 134.3–140.5 → 148.7–149.7, 768×768 by 512
// 136.4–142.7 → 141.4–148.3, f16 2048×5632 by 128 86.0–106.3 → 105.3–124.4; but 768×640 by
// 512 138.0–149.5 → 142.4–147.2, 768×128 by 512 186.8 → 156.4, and the attention's
// 512×64 by 512 168.4 → 141.1. On Zen 4 a broadcast from memory takes a share of the
// multiply and add pipes (see gemm4x8AVX512).
func wideInputsOnce(cols int) bool { return zmmFullWidth && cols >= wideOnceMinCols }

// wideOnceMinCols is the shortest row for which wideInputsOnce packs inputs once.
const wideOnceMinCols = 768

// gemmPanelRow returns row r of a block of rows ending at end for the panel: a row of
// zeros past the end, else the stored row, or the row decoded into the scratch's slot
// (0 or 1). A stored row also asks for the row one block on to be read into L2, where the
// next block will find it (the decode callbacks do the same for the rows they read).
func gemmPanelRow(s *gemmScratch, w []float32, cols, r, end int, decode func(dst []float32, r int), slot int) []float32 {
	if r >= end {
		return s.rows[2*cols : 3*cols]
	}
	if decode != nil {
		row := s.rows[slot*cols : (slot+1)*cols]
		decode(row, r)
		return row
	}
	if next := (r + gemmRows) * cols; next+cols <= len(w) && implPrefetchAVX.on {
		prefetchLinesL2((*byte)(unsafe.Pointer(&w[next])), 4*cols)
	}
	return w[r*cols : (r+1)*cols]
}
