//go:build amd64 && !purego

package kernels

import (
	"sync"
	"unsafe"

	"github.com/kvref/kvref/internal/pages"
)

// gemm4x8AVX512 runs tiles groups of four rows (n floats each, one group after the other
// from w) against eight input vectors packed by packPairs8AVX512 into xp, over n columns
// (a positive multiple of 8), writing row k of input j to out[j·outStride+k].
// Implemented in gemm_avx512_amd64.s.
//
//go:noescape
func gemm4x8AVX512(out *float32, outStride int, w, xp *float32, n, tiles int)

// gemm2x6AVX runs tiles pairs of rows (rows stride floats apart, one pair after the other
// from w) against six input vectors packed by packInputs into xp, in twelve YMM
// accumulators, over n columns (a positive multiple of 8) that may be one chunk of longer
// rows: the accumulators start at zero or, with gemmAccLoad, from acc; with gemmAccStore
// they go back to acc for the next chunk, else row k of input j goes to
// out[j·outStride+k]. Implemented in gemm_avx_amd64.s.
//
//go:noescape
func gemm2x6AVX(out *float32, outStride int, w, xp *float32, n, tiles, stride int, acc *float32, flags int)

// gemm2x4AVX is gemm2x6AVX for four input vectors packed by packInputs; acc holds 64
// floats per pair of rows. Implemented in gemm_avx_amd64.s.
//
//go:noescape
func gemm2x4AVX(out *float32, outStride int, w, xp *float32, n, tiles, stride int, acc *float32, flags int)

// gemm4x6AVX512 is gemm2x6AVX for groups of four rows (tiles of them) in 24 of the 32 YMM
// registers of AVX-512 VL, row 4t+k of input j going to out[j·outStride+4t+k]; acc holds
// 192 floats per group. Implemented in gemm_avx512vl_amd64.s.
//
//go:noescape
func gemm4x6AVX512(out *float32, outStride int, w, xp *float32, n, tiles, stride int, acc *float32, flags int)

// gemm4x4AVX512 is gemm4x6AVX512 for four input vectors packed by packInputs; acc holds 128
// floats per group. Implemented in gemm_avx512vl_amd64.s.
//
//go:noescape
func gemm4x4AVX512(out *float32, outStride int, w, xp *float32, n, tiles, stride int, acc *float32, flags int)

// The flags of gemm2x6AVX, gemm4x6AVX512, gemm4x4AVX512 and gemmQ8x1x4AVX2 for one chunk
// of columns.
const (
	gemmAccLoad  = 1 // start from the accumulators at acc (an earlier chunk's), not from zero
	gemmAccStore = 2 // store the accumulators at acc (a later chunk carries on), do not reduce
)

// gemmChunkFlags returns the flags of the chunk [c0, c1) of n columns (or blocks): load
// the accumulators unless it is the first, store them unless it is the last.
func gemmChunkFlags(c0, c1, n int) int {
	flags := 0
	if c0 > 0 {
		flags |= gemmAccLoad
	}
	if c1 < n {
		flags |= gemmAccStore
	}
	return flags
}

// packInputs packs the n input vectors at x (cols floats each, consecutive) for
// gemm2x6AVX (n = 6), gemm4x6AVX512 (6) and gemm4x4AVX512 (4) into dst (n·cols floats):
// the block of eight columns from column b of every vector side by side, vector j's
// eight floats at dst[n·b+8j:]. cols is a multiple of 8.
func packInputs(dst, x []float32, cols, n int) {
	dst, x = dst[:n*cols], x[:n*cols]
	if n > 0 && cols > 0 {
		packInputsAVX(&dst[0], &x[0], cols, n)
	}
}

// packInputsAVX is packInputs's loop: blocks of eight floats copied through a YMM
// register (Go copied each with a call of memmove, 16% of a 128×2048 product by 16
// inputs). Implemented in gemm_avx_amd64.s.
//
//go:noescape
func packInputsAVX(dst, x *float32, cols, n int)

// gemmL1Inputs and gemmChunkCols decide how many columns the narrow micro-kernel takes at
// a time (gemmChunk): it reads its six inputs again for every pair of rows, so they must
// stay in the core's L1 data cache (32 KiB on AMD Zen 3 and 4) while the rows stream past.
// Rows whose six inputs take at most gemmL1Inputs go whole, longer ones in even chunks of
// at most gemmChunkCols columns (12 KiB of inputs). On Zen 4 (cpu-GFLOP/s of one thread,
// 512 inputs): 768×2048 65 whole and unpacked, 80 packed, 86 packed in chunks of 512 (81
// of 256, 79 of 1024); 2048×5632 76, 75, 82.
const (
	gemmL1Inputs  = 20 << 10
	gemmChunkCols = 512
)

// gemmChunk is how many columns of cols the narrow micro-kernel takes at a time, a
// multiple of 8. Each lane carries its sum from one chunk to the next in order, so chunks
// change no bit.
func gemmChunk(cols int) int {
	if 4*gemmNarrow.inputs*cols <= gemmL1Inputs {
		return cols
	}
	n := (cols + gemmChunkCols - 1) / gemmChunkCols
	return ((cols+n-1)/n + 7) &^ 7
}

// gemmRows is how many rows the blocked products take at a time: a block of rows (at most
// 32 × cols floats, 96 KiB for 768 columns, decoded once when the rows are stored in
// another form) stays in the core's L2 cache while every group of inputs meets it.
const gemmRows = DecodedPanelRows

// gemmWideInPlaceRows is how many rows gemmAVX takes at a time when gemm4x8AVX512 reads
// them where they lie and one block holds all the inputs: each group of four rows meets
// every group of eight inputs while it is in L1, so the rows stream from memory in one
// pass rather than a block of gemmRows at a time, read again from L2 for the next eight
// inputs while memory idles. One thread on Zen 5, rows from memory, alternated call by
// call (cpu-GFLOP/s, blocks of 32 → 4 rows): 2304×768 by 16 112.5 → 130.8, 2048×2048 by
// 16 99.0 → 118.5, 2048×5632 by 16 99.9 → 119.4, 5632×2048 by 16 108.2 → 119.6, 2304×768
// by 12 98.8 → 112.0 (blocks of 8 and 16 rows fell between).
const gemmWideInPlaceRows = 4

// gemmInputBytes bounds a block of inputs (the inputs' own floats; the wide kernel's
// packed copy holds each twice): the block is read again for every block of rows, and
// must stay in the caches meanwhile. A TinyLlama-shape prefill of 512 tokens packed 4 MiB
// (8 MiB at 2048 columns, 11.5 MiB at 5632) per thread and ran its down projection at
// 52–66 cpu-GFLOP/s; in blocks of at most 2 MiB, 76–84 (the weights are read once per
// block of inputs, which the blocks' speed more than repays: f32 prefill 9.2–10.0 →
// 7.1–7.6 s, f16 8.7 → 7.6–8.0 s on Zen 4).
const gemmInputBytes = 2 << 20

// gemmInputBlock is how many inputs of cols floats a blocked product takes at a time: a
// multiple of unit (the micro-kernel's group) whose floats fit gemmInputBytes, at least one
// group.
func gemmInputBlock(cols, unit int) int {
	return max(unit, gemmInputBytes/(4*cols)/unit*unit)
}

// inputBlocks is InputBlocks for the kernels in use: the blocks of inputs of a decoded
// product, the leftovers (fewer than one micro-kernel group) going with the last block.
func inputBlocks(cols, batch int) int {
	if batch <= 1 || cols%8 != 0 || !implMatMulAVX.on {
		return 1
	}
	shape := gemmNarrow
	switch {
	case implMatMulAVX512.on && batch >= gemmPairedMinBatch:
		shape = gemmPaired
	case implMatMulAVX512.on:
		shape = gemmShapeFor(true, batch)
	}
	full, step := gemmInputSplit(cols, batch, shape)
	if full == 0 {
		return 1
	}
	return (full + step - 1) / step
}

// gemmInputSplit returns how many of batch inputs go through shape's micro-kernel (full,
// whole groups) and how many of those a block of inputs takes (step; 0 when full is).
func gemmInputSplit(cols, batch int, shape gemmShape) (full, step int) {
	full, _ = gemmGroups(batch, shape)
	return full, min(full, gemmInputBlock(cols, shape.inputs))
}

// gemmGroups splits batch inputs into whole groups of shape's micro-kernel (full) and, for
// gemmQuad and gemmNarrow, the inputs after them that go through their four-input kernels
// (gemm4x4AVX512, gemm2x4AVX) with the last block (extra: 0, 4 or 8): four of the four or
// five left over and, for gemmQuad, eight in place of the last group of six and the two or
// three left over (8 = 4+4 and 9 = 4+4+1 rather than 6 beside the four-row dots of two and
// one; with gemm2x4AVX that was slower: 512×2048 by 8 inputs, 76–78 → 64–74 cpu-GFLOP/s).
func gemmGroups(batch int, shape gemmShape) (full, extra int) {
	full = batch / shape.inputs * shape.inputs
	if shape != gemmQuad && shape != gemmNarrow {
		return full, 0
	}
	switch left := batch - full; {
	case left >= 4:
		return full, 4
	case left >= 2 && full > 0 && shape == gemmQuad:
		return full - shape.inputs, 8
	}
	return full, 0
}

// gemmShape is one micro-kernel's block of rows by inputs.
type gemmShape struct{ rows, inputs int }

var (
	gemmPaired = gemmShape{8, 6} // gemm8x6AVX512, on rows laid out in pairs (gemmWide512)
	gemmQuad   = gemmShape{4, 6} // gemm4x6AVX512 (and gemm4x4AVX512), in YMM registers
	gemmWide   = gemmShape{4, 8} // gemm4x8AVX512, in ZMM registers
	gemmNarrow = gemmShape{2, 6} // gemm2x6AVX
)

// gemmShapeFor is the micro-kernel of gemmAVX's own loop for batch inputs: with wide
// (AVX-512), gemmWide for eight or nine, and for more when ZMM arithmetic runs at full
// width (zmmFullWidth), else gemmQuad; without, gemmNarrow. One thread on Zen 4, 2048×2048
// float32 rows, cpu-GFLOP/s with gemm4x8AVX512 (and four-row dots for the inputs left
// over) → gemmQuad: batch 4 53–57 → 74, 5 48–53 → 59–62, 8 84–87 → 77–78, 9 74–75 →
// 68–70, 10 78–81 → 87–89, 12 77 → 90–94, 16 85–86 → 89–92, 20 78–79 → 89–92, 32 85–86 →
// 87–91, 47 81 → 85–88. On Zen 5 (family 26), where a ZMM register's sixteen products
// cost what a YMM register's eight do, one thread, the two alternated call by call,
// medians of 60: gemmQuad → gemmWide, 2304×768 (a stories110M QKV) by 10 94.8 → 123.1,
// 13 87.0 → 126.6, 15 85.7 → 117.8, 16 92.2 → 138.1, 20 96.1 → 142.5, 23 86.5 → 122.1, 47
// 91.3 → 133.5; 2048×2048 by 16 70.9 → 91.1, 2048×5632 by 16 66.3 → 79.6.
func gemmShapeFor(wide bool, batch int) gemmShape {
	switch {
	case wide && (batch == 8 || batch == 9 || zmmFullWidth && batch > 9):
		return gemmWide
	case wide:
		return gemmQuad
	}
	return gemmNarrow
}

// gemmPairedMinBatch and gemmPairedMaxCols bound the products that gemmAVX lays out in
// pairs of rows for gemm8x6AVX512 (gemmWide512) rather than multiply where they are (or as
// decoded into a block of rows) with gemm4x8AVX512 (measured so; gemm4x6AVX512 in place
// later gave 97–98 cpu-GFLOP/s where laid out gave 100–104, 768×768 by 512 inputs, and
// 91–93 against 99–100 for 2048×2048 f16 rows by 256): laying out costs a copy of every row
// per block of inputs, which a small batch does not repay (one thread on Zen 4, 2048×2048
// float32 rows: batch 16 96 cpu-GFLOP/s in place, 68-75 laid out; batch 48 88 and 92;
// batch 128 87 and 98; a TinyLlama-shape f16 decode step of 16 sequences: 309-317 ms
// decoded in place, 330-458 laid out), nor do float32 rows so long that the panel of the
// next rows, read into L2 ahead, no longer fits beside the current one (2048×5632: never
// better, 86 and 86 at batch 128). Decoded rows are written into a panel anyway, and are
// laid out whatever their length.
const (
	gemmPairedMinBatch = 48
	gemmPairedMaxCols  = 4096
)

// gemmScratch is the blocked products' packed inputs, block of rows, carried accumulators
// and decoded rows (for the AVX2 Q8_0 kernel, matMulQ8_0: its scale products in panel and
// its accumulators in acc), recycled through gemmBuffers: a fresh buffer per product would
// cost page faults and zeroing every time.
type gemmScratch struct{ packed, panel, acc, rows []float32 }

var gemmBuffers = sync.Pool{New: func() any { return new(gemmScratch) }}

// gemmAVX is matMulRowsGeneric for rows [start, end) of a matrix whose cols is a positive
// multiple of 8, for a batch of input vectors: the rows come from w (row-major, rows ×
// cols) or, when decode is set, from decode(dst, r). With wide (AVX-512), batches of at
// least gemmPairedMinBatch whose rows are decoded or at most gemmPairedMaxCols long go to
// gemmWide512. Otherwise, once per row per block of inputs (gemmInputSplit; one block
// unless the batch is large), the rows go in blocks of gemmRows (of gemmWideInPlaceRows for
// gemm4x8AVX512 reading them in place against one block of inputs); each meets every group of
// the block's inputs (packed first) in the micro-kernel of gemmShapeFor (gemm4x6AVX512 or
// gemm4x8AVX512 with wide, else gemm2x6AVX; the YMM kernels in chunks of gemmChunk
// columns), and in the last block of inputs also the inputs left over: four or eight of
// them in gemm4x4AVX512 or gemm2x4AVX (gemmGroups), the rest in the four-row kernels, four
// (wide), two and one at a time; the rows left over at the end (fewer than four) go one
// dotAVXAsm at a time. Every output keeps Dot's lanes and order, so the blocking changes
// no bit. The caller has checked the arguments.
func gemmAVX(out, w, x []float32, rows, cols, batch, start, end int, decode func(dst []float32, r int), wide bool) {
	if wide && batch >= gemmPairedMinBatch && (decode != nil || cols <= gemmPairedMaxCols) {
		gemmWide512(out, w, x, rows, cols, batch, start, end, decode)
		return
	}
	shape := gemmShapeFor(wide, batch)
	chunked := shape != gemmWide // the YMM kernels take the columns in chunks
	groupKernel, fourKernel := chunkedKernels(shape)
	s := gemmBuffers.Get().(*gemmScratch)
	defer gemmBuffers.Put(s)

	full, step := gemmInputSplit(cols, batch, shape) // inputs [0, full) go through the micro-kernel
	_, quad4 := gemmGroups(batch, shape)             // and [full, full+quad4) through the four-input kernels
	if decode != nil {
		s.panel = grow(s.panel, gemmRows*cols)
	}
	chunk := gemmChunk(cols)
	if chunked {
		s.acc = grow(s.acc, gemmRows*gemmNarrow.inputs*8)
	}
	quadEnd := start + (end-start)&^3 // rows [start, quadEnd) go in blocks
	panelRows := gemmRows
	if decode == nil && !chunked && step == full {
		panelRows = gemmWideInPlaceRows // one block of inputs: each group of rows meets all of them
	}
	// The inputs go in blocks of step (all of them, unless their packed copy would be too
	// large to stay in the caches while every block of rows meets it); the last block also
	// takes the inputs left over, in the four-row kernels.
	for b0 := 0; ; b0 += step {
		b1 := min(b0+step, full)
		last := b1 == full
		extra := 0 // the four-input kernel's inputs, packed after the block's
		if last {
			extra = quad4
		}
		if b1 > b0 || extra > 0 {
			s.packed = growAligned(s.packed, (b1-b0+extra)*cols)
			for b := b0; b < b1; b += shape.inputs {
				if chunked {
					packInputs(s.packed[(b-b0)*cols:], x[b*cols:], cols, shape.inputs)
				} else {
					packPairs8AVX512(&s.packed[(b-b0)*cols], &x[b*cols], cols)
				}
			}
			for e := 0; e < extra; e += 4 {
				packInputs(s.packed[(b1-b0+e)*cols:], x[(b1+e)*cols:], cols, 4)
			}
		}
		for r0 := start; r0 < quadEnd; r0 += panelRows {
			r1 := min(r0+panelRows, quadEnd)
			var wb []float32 // the block's rows
			if decode == nil {
				wb = w[r0*cols : r1*cols]
			} else {
				wb = s.panel[:(r1-r0)*cols]
				for r := r0; r < r1; r++ {
					decode(wb[(r-r0)*cols:(r-r0+1)*cols], r)
				}
			}
			tiles := (r1 - r0) / shape.rows
			for b := b0; b < b1; b += shape.inputs {
				if !chunked {
					gemm4x8AVX512(&out[b*rows+r0], rows, &wb[0], &s.packed[(b-b0)*cols], cols, tiles)
					continue
				}
				gemmChunks(groupKernel, &out[b*rows+r0], rows, wb, s.packed[(b-b0)*cols:], shape.inputs, cols, chunk, tiles, s.acc)
			}
			for e := 0; e < extra; e += 4 {
				gemmChunks(fourKernel, &out[(b1+e)*rows+r0], rows, wb, s.packed[(b1-b0+e)*cols:], 4, cols, chunk, tiles, s.acc)
			}
			if last {
				for r := r0; r < r1; r += 4 {
					rows4(out, &wb[(r-r0)*cols], x, rows, cols, r, full+extra, batch, wide)
				}
			}
		}
		if last {
			break
		}
	}
	for r := quadEnd; r < end; r++ {
		var wr []float32
		if decode == nil {
			wr = w[r*cols : (r+1)*cols]
		} else {
			wr = s.panel[:cols]
			decode(wr, r)
		}
		for b := range batch {
			out[b*rows+r] = dotAVXAsm(&x[b*cols], &wr[0], cols)
		}
	}
}

// growAligned returns s resized to n floats starting at a 64-byte boundary, reallocating
// only when its capacity is short.
func growAligned(s []float32, n int) []float32 {
	if cap(s) >= n && uintptr(unsafe.Pointer(unsafe.SliceData(s)))%64 == 0 {
		return s[:n]
	}
	return alignedFloats(n)
}

// alignedFloats returns n float32s starting at a 64-byte boundary.
func alignedFloats(n int) []float32 {
	buf := pages.Floats(n + 15)
	off := int(uintptr(unsafe.Pointer(&buf[0]))%64) / 4
	if off != 0 {
		off = 16 - off
	}
	return buf[off : off+n : off+n]
}

// chunkedKernel is a micro-kernel that takes the columns in chunks, its accumulators
// carried through acc (gemm2x6AVX and its kin).
type chunkedKernel func(out *float32, outStride int, w, xp *float32, n, tiles, stride int, acc *float32, flags int)

// chunkedKernels returns the chunked micro-kernels of shape (gemmQuad or gemmNarrow): the
// one for its groups of six inputs and the one for four.
func chunkedKernels(shape gemmShape) (group, four chunkedKernel) {
	if shape == gemmQuad {
		return gemm4x6AVX512, gemm4x4AVX512
	}
	return gemm2x6AVX, gemm2x4AVX
}

// gemmChunks runs kern for one block of rows (wb, tiles groups of the kernel's rows, rows
// cols floats apart) against inputs packed n at a time at xp, chunk columns at a time,
// each lane carrying its sum from one chunk to the next (gemmChunkFlags).
func gemmChunks(kern chunkedKernel, out *float32, rows int, wb, xp []float32, n, cols, chunk, tiles int, acc []float32) {
	for c0 := 0; c0 < cols; c0 += chunk {
		c1 := min(c0+chunk, cols)
		kern(out, rows, &wb[c0], &xp[n*c0], c1-c0, tiles, cols, &acc[0], gemmChunkFlags(c0, c1, cols))
	}
}
