package kernels

import (
	"encoding/binary"
	"fmt"
)

// Batched k-quant products: a panel of k-quant rows against several Q8_K-quantized input
// vectors at once, for the small batches of decoding (a step of 16 sequences) and the
// prefill. Each output is the row dot of the definition (kquant.go), bit for bit: a
// super-block's products sum to one integer per (row, vector) whatever the order, and its
// float step is the same. On CPUs with AVX-512 VNNI the kernels keep one vector per SIMD
// lane (kbatch_avx512_amd64.s): a row's codes are unpacked once, and each group of four
// codes is broadcast and multiplied with the four input codes of sixteen vectors by one
// VPDPBUSD; a tile costs the same however few of its lanes are used, so fewer than
// kTileMinLanes vectors past the whole tiles go the AVX2 way. With AVX2 a row meets four
// or eight vectors at a time in the row dots' arithmetic, its codes and scale words
// unpacked once for them (kquant_avx2_amd64.s); elsewhere, and for the last one to three
// vectors, the vectors go through the row dots one at a time.

// KBatchTile is the number of input vectors the batched kernels multiply at once.
const KBatchTile = 16

// The layout of one super-block of a tile of Q8KBatch: the 64 groups of four codes of the
// sixteen vectors (each code plus 128, unsigned, vector v in bytes 4v..4v+3 of a group),
// then for each pair of block sums j the sixteen vectors' pairs (bsum[2j] | bsum[2j+1]<<16),
// then the sixteen vectors' scales, then for each pair of 32-value sums k (the types with a
// min per 32 values) the sixteen vectors' pairs (s[2k] | s[2k+1]<<16, s[j] =
// bsum[2j] + bsum[2j+1], at most 32·127 in magnitude).
const (
	kTileSumsOffset   = KBlockLen / 4 * 64
	kTileScaleOffset  = kTileSumsOffset + 8*64
	kTileSums32Offset = kTileScaleOffset + 64
	kTileStride       = kTileSums32Offset + 4*64 // bytes per super-block of a tile
)

// Q8KBatch is a set of Q8_K-quantized vectors of the same length, transposed in tiles of
// KBatchTile for the VNNI kernels and the rest laid out four at a time for the AVX2 ones
// (as this CPU runs them when Set is called: tiledVectors). Set fills it; it holds on to
// the vectors it was set from (the portable path multiplies them one by one), which must
// not change while it is used.
type Q8KBatch struct {
	n     int
	xs    []*Q8KInput
	tiled int    // the vectors [0, tiled) are in tiles, the rest in octs
	tiles []byte // ceil(tiled/16) tiles of n/256 super-blocks of kTileStride bytes
	octs  []byte // for the AVX2 kernels: super-block sb of vector tiled+8h+v at ((h·n/256+sb)·8+v)·q8KStride
}

// kTileMinLanes is the fewest vectors a tile takes beyond the whole tiles: a tile costs the
// same whatever its lanes hold, and fewer vectors cost less in the AVX2 kernels (four or
// eight at a time) and the row dots. A TinyLlama-shape Q4_K_M decode step on Zen 4 (2
// threads): 4 vectors 78.7 ms in a tile, 39.5 through dotQ4_KV4AVX2; 8 vectors 84.3 and
// 72.3; 16 vectors in one tile 86.0. Where ZMM arithmetic is full width (zmmFullWidth) the
// tile's ZMM kernels cost half as much beside the AVX2 ones, and kTileMinLanesFull vectors
// repay one: on Zen 5 (family 26; 2 threads, `kvref bench -m tl-Q4_K_M.gguf --batches`,
// builds alternated twice, ms a step, AVX2 kernels and row dots against a tile) 4 vectors
// 39.5/40.0 against 57.7/59.8, 5 51.2/52.2 against 59.3/67.9, 6 62.8/66.8 against
// 58.6/68.6, 7 70.5/79.1 against 61.9/68.8, 8 71.7/79.1 and 81.2/75.7 against 64.2/70.7
// and 59.7/58.9.
const (
	kTileMinLanes     = 9
	kTileMinLanesFull = 7
)

// tileMinLanes is kTileMinLanes for this CPU.
func tileMinLanes() int {
	if zmmFullWidth {
		return kTileMinLanesFull
	}
	return kTileMinLanes
}

// tiledVectors is how many of count vectors go in tiles: the whole tiles, and the rest too
// when they are at least tileMinLanes; none without the VNNI kernels.
func tiledVectors(count int) int {
	if !kBatchFast() {
		return 0
	}
	if whole := count / KBatchTile * KBatchTile; count-whole < tileMinLanes() {
		return whole
	}
	return count
}

// Count is the number of vectors.
func (b *Q8KBatch) Count() int { return len(b.xs) }

// Len is the length of the vectors.
func (b *Q8KBatch) Len() int { return b.n }

// Set makes b the batch of xs, which must all have the same length; it panics otherwise.
func (b *Q8KBatch) Set(xs []*Q8KInput) {
	b.xs = append(b.xs[:0], xs...)
	b.n = 0
	if len(xs) > 0 {
		b.n = xs[0].n
	}
	for i, x := range xs {
		if x.n != b.n {
			panic(fmt.Sprintf("kernels: Q8KBatch.Set: vector %d has %d values, vector 0 %d", i, x.n, b.n))
		}
	}
	b.tiled = tiledVectors(len(xs))
	b.octs = b.octs[:0]
	if kBatchOcts() {
		b.setOcts()
	}
	if b.tiled == 0 {
		return
	}
	nb, tiles := b.n/KBlockLen, (b.tiled+KBatchTile-1)/KBatchTile
	b.tiles = grow(b.tiles, tiles*nb*kTileStride)
	clear(b.tiles)
	le := binary.LittleEndian
	for i, x := range xs[:b.tiled] {
		t, v := i/KBatchTile, i%KBatchTile
		for sb := range nb {
			src := x.block(sb)
			dst := b.tiles[(t*nb+sb)*kTileStride : (t*nb+sb+1)*kTileStride]
			for g := range KBlockLen / 4 {
				le.PutUint32(dst[64*g+4*v:], le.Uint32(src[4*g:])^0x80808080)
			}
			for j := range 8 {
				le.PutUint32(dst[kTileSumsOffset+64*j+4*v:], le.Uint32(src[q8KSumsOffset+4*j:]))
			}
			le.PutUint32(dst[kTileScaleOffset+4*v:], le.Uint32(src[q8KDOffset:]))
			for k := range 4 {
				lo, hi := q8KSum(src, 4*k)+q8KSum(src, 4*k+1), q8KSum(src, 4*k+2)+q8KSum(src, 4*k+3)
				le.PutUint32(dst[kTileSums32Offset+64*k+4*v:], uint32(uint16(lo))|uint32(uint16(hi))<<16)
			}
		}
	}
	// The unused lanes of the last tile: codes 0 (stored as 128), sums 0, scale 0.
	for v := b.tiled % KBatchTile; v > 0 && v < KBatchTile; v++ {
		t := tiles - 1
		for sb := range nb {
			dst := b.tiles[(t*nb+sb)*kTileStride:]
			for g := range KBlockLen / 4 {
				le.PutUint32(dst[64*g+4*v:], 0x80808080)
			}
		}
	}
}

// setOcts lays the whole groups of four vectors past the tiled ones out for the AVX2
// kernels, eight at a time: each super-block of the eight side by side, as Q8KInput stores
// it (a last group of four fills half an oct).
func (b *Q8KBatch) setOcts() {
	nb, quads := b.n/KBlockLen, (len(b.xs)-b.tiled)/4
	b.octs = grow(b.octs, (quads+1)/2*nb*8*q8KStride)
	for i, x := range b.xs[b.tiled : b.tiled+4*quads] {
		h, v := i/8, i%8
		for sb := range nb {
			copy(b.octs[((h*nb+sb)*8+v)*q8KStride:][:q8KStride], x.blocks[sb*q8KStride:(sb+1)*q8KStride])
		}
	}
}

// DotQ2_KBatch sets out[v·stride + r] to the product of input vector v of x with row r of
// the rows Q2_K rows in w (rows of x.Len()/256 super-blocks), for every v < x.Count() and
// r < rows: DotQ2_KRows of each vector, bit for bit. It panics if w or out is too short.
func DotQ2_KBatch(out []float32, stride int, x *Q8KBatch, w []byte, rows int) {
	dotKBatch(&kQ2_K, out, stride, x, w, rows)
}

// DotQ3_KBatch is DotQ2_KBatch for Q3_K rows.
func DotQ3_KBatch(out []float32, stride int, x *Q8KBatch, w []byte, rows int) {
	dotKBatch(&kQ3_K, out, stride, x, w, rows)
}

// DotQ4_KBatch is DotQ2_KBatch for Q4_K rows.
func DotQ4_KBatch(out []float32, stride int, x *Q8KBatch, w []byte, rows int) {
	dotKBatch(&kQ4_K, out, stride, x, w, rows)
}

// DotQ5_KBatch is DotQ2_KBatch for Q5_K rows.
func DotQ5_KBatch(out []float32, stride int, x *Q8KBatch, w []byte, rows int) {
	dotKBatch(&kQ5_K, out, stride, x, w, rows)
}

// DotQ6_KBatch is DotQ2_KBatch for Q6_K rows.
func DotQ6_KBatch(out []float32, stride int, x *Q8KBatch, w []byte, rows int) {
	dotKBatch(&kQ6_K, out, stride, x, w, rows)
}

// dotKBatch checks the sizes and runs the batched product of format f.
func dotKBatch(f *kFormat, out []float32, stride int, x *Q8KBatch, w []byte, rows int) {
	rb := x.n / KBlockLen * f.blockBytes
	w = w[:formatRowsBytes("", f.name, "Batch", rows, rb)]
	if c := len(x.xs); c > 0 && rows > 0 {
		checkBatchOut("Dot"+f.name+"Batch", out, stride, c, rows)
	}
	if rows == 0 || len(x.xs) == 0 {
		return
	}
	if x.n == 0 {
		for v := range x.xs {
			clear(out[v*stride : v*stride+rows])
		}
		return
	}
	if !dotKBatchFast(f, out, stride, x, w, rows, rb) {
		kBatchGeneric(f, out, stride, x, w, rows, rb)
	}
}

// batchPanelBytes bounds the rows the batched products take at a time where vectors meet
// them one after another: a panel that stays in the core's L2 cache meanwhile, so that the
// rows come from memory once rather than once per vector. The row dots' arithmetic, not
// the memory, is most of such a batch's time: TinyLlama-shape decode steps of two
// sequences on Zen 4 went from 33.5–40.9 to 32.9 ms (Q4_K_M) and 57.0–57.5 to 50.9–52.1
// (q8_0, whose vectors left over from the groups of four take the same panels).
const batchPanelBytes = 256 << 10

// panelRows is how many rows of rb bytes a panel of batchPanelBytes takes, at least one.
func panelRows(rb int) int { return max(1, batchPanelBytes/max(rb, 1)) }

// checkBatchOut panics, naming the product, unless out holds vectors outputs of rows at
// stride apart (rows, vectors > 0).
func checkBatchOut(name string, out []float32, stride, vectors, rows int) {
	if stride < rows || vectors-1 > (len(out)-rows)/stride {
		panic(fmt.Sprintf("kernels: %s: %d vectors of %d rows at stride %d need %d outputs, got %d", name, vectors, rows, stride, (vectors-1)*stride+rows, len(out)))
	}
}

// kRowsPanels runs the row dots of the vectors of x from v0 on, a panel of rows at a time.
func kRowsPanels(f *kFormat, out []float32, stride int, x *Q8KBatch, w []byte, rows, rb, v0 int) {
	panel := panelRows(rb)
	for r0 := 0; r0 < rows; r0 += panel {
		r1 := min(r0+panel, rows)
		kRowsVectors(f, out, stride, x, w[r0*rb:r1*rb], r0, r1, v0)
	}
}

// kRowsVectors runs the row dots of the rows [r0, r1) (w: theirs) against the vectors of x
// from v0 on, two at a time where a kernel takes a pair (dotKRowsPairFast), else one by one.
func kRowsVectors(f *kFormat, out []float32, stride int, x *Q8KBatch, w []byte, r0, r1, v0 int) {
	for v := v0; v < len(x.xs); v++ {
		o := out[v*stride+r0:]
		if v+1 < len(x.xs) && dotKRowsPairFast(f, o, stride, x.xs[v], x.xs[v+1], w, r1-r0) {
			v++
			continue
		}
		dotKRows(f, o[:r1-r0], x.xs[v], w)
	}
}
