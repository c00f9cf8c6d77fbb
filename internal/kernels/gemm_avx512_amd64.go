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

// packInputsDup packs the first k of slots input vectors at x (cols floats each,
// consecutive; cols a multiple of 8) for the wide kernels into dst (2·slots·cols floats):
// per block of eight columns, each vector's block twice, vector j at 16j of the block's
// 16·slots floats; the slots past k are zero. With AVX-512 on (always, where the wide
// kernels run) packInputsDupAVX512 does it, a ZMM store a block: on Zen 5 the Go loop took
// a sixth of a stories110M-shape prefill's product time.
func packInputsDup(dst, x []float32, cols, k, slots int) {
	dst = dst[:2*slots*cols]
	if implMatMulAVX512.on && cols > 0 {
		x = x[:k*cols]
		var xp *float32
		if k > 0 {
			xp = &x[0]
		}
		packInputsDupAVX512(&dst[0], xp, cols, k, slots)
		return
	}
	packInputsDupGeneric(dst, x, cols, k, slots)
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
// (packInputsDup, six at a time, the leftovers of the last block in twos), and the rows go
// in blocks of gemmRows, laid out in pairs (interleavePairsAVX512; decoded first, when
// decode is set) in a panel that stays in L2 while every group of inputs meets it in
// gemm8x6AVX512 and gemm8x2AVX512, eight rows at a time (the last group of a panel padded
// with zero rows, its stores masked). Every output keeps Dot's lanes and order, so the
// blocking changes no bit. The caller has checked the arguments.
func gemmWide512(out, w, x []float32, rows, cols, batch, start, end int, decode func(dst []float32, r int)) {
	s := gemmBuffers.Get().(*gemmScratch)
	defer gemmBuffers.Put(s)
	s.panel = growAligned(s.panel, gemmRows*cols)
	s.rows = grow(s.rows, 3*cols) // two decoded rows, then a row of zeros
	clear(s.rows[2*cols:])
	full, step := gemmInputSplit(cols, batch, gemmPaired)
	for b0 := 0; ; b0 += step {
		b1 := min(b0+step, full)
		last := b1 == full
		groups := (b1 - b0) / gemmPaired.inputs
		pairs := 0 // the leftover inputs, two at a time, go with the last block
		if last {
			pairs = (batch - b1 + 1) / 2
		}
		s.packed = growAligned(s.packed, 2*cols*(6*groups+2*pairs))
		for g := range groups {
			packInputsDup(s.packed[12*cols*g:], x[(b0+6*g)*cols:], cols, 6, 6)
		}
		for p := range pairs {
			b := b1 + 2*p
			packInputsDup(s.packed[2*cols*(6*groups+2*p):], x[b*cols:], cols, min(2, batch-b), 2)
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
				b, xd := b0+6*g, &s.packed[12*cols*g]
				if tiles > 0 {
					gemm8x6AVX512(&out[b*rows+r0], rows, &panel[0], xd, cols, tiles, 0xff)
				}
				if part > 0 {
					gemm8x6AVX512(&out[b*rows+r0+8*tiles], rows, &panel[8*tiles*cols], xd, cols, 1, mask)
				}
			}
			for p := range pairs {
				b, xd := b1+2*p, &s.packed[2*cols*(6*groups+2*p)]
				full1, mask1 := 0xff, mask // input b+1's masks: none when it is padding
				if b+1 == batch {
					full1, mask1 = 0, 0
				}
				if tiles > 0 {
					gemm8x2AVX512(&out[b*rows+r0], rows, &panel[0], xd, cols, tiles, 0xff, full1)
				}
				if part > 0 {
					gemm8x2AVX512(&out[b*rows+r0+8*tiles], rows, &panel[8*tiles*cols], xd, cols, 1, mask, mask1)
				}
			}
		}
		if last {
			break
		}
	}
}

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
