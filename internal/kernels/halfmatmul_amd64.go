//go:build amd64 && !purego

package kernels

import (
	"sync"

	"github.com/kvref/kvref/internal/pages"
)

// halfFormat is one 16-bit row format: its portable row dot, the widening of a row, and
// its assembly kernels.
type halfFormat struct {
	dot    func(x []float32, row []byte) float32 // the portable row dot
	decode func(dst []float32, src []byte)       // the row widened to float32
	halfKernels
}

// halfKernels are a 16-bit format's assembly row kernels and the impls that enable them
// (fast: the AVX2 ones; fast4: x4x4; fast8: x4x8 and x4x4z).
type halfKernels struct {
	fast, fast4, fast8 *impl
	one                func(x []float32, row []byte) float32                                       // one row
	x4                 func(out *float32, w *byte, x *float32, n, stride int)                      // four rows, one input
	q4                 func(out *float32, w *byte, x *float32, c, q, n, stride int)                // c rows of each quarter of 4q rows, one input
	q4x2               func(out *float32, outStride int, w *byte, x *float32, c, q, n, stride int) // the same, two inputs
	x4x2               func(out *float32, outStride int, w *byte, x *float32, n, stride int)       // four rows, two inputs
	x4x4               func(out *float32, outStride int, w *byte, x *float32, n int)               // four rows, four inputs
	x4x8               func(out *float32, outStride int, w *byte, xp *float32, n int)              // four rows, eight inputs packed by packInputPairs
	x4x4z              func(out *float32, outStride int, w *byte, xp *float32, n int)              // four rows, four inputs packed by packInputPairs
}

var (
	halfF16  = halfFormat{dotF16Generic, decodeF16, halfKernels{implF16AVX2, implHalfAVX512, implHalfAVX512x8, dotF16AVX2, dotF16x4AVX2, dotF16Q4AVX2, dotF16Q4x2AVX2, dotF16x4x2AVX2, dotF16x4x4AVX512, dotF16x4x8AVX512, dotF16x4x4ZAVX512}}
	halfBF16 = halfFormat{dotBF16Generic, DecodeBF16, halfKernels{implBF16AVX2, implHalfAVX512, implHalfAVX512x8, dotBF16AVX2, dotBF16x4AVX2, dotBF16Q4AVX2, dotBF16Q4x2AVX2, dotBF16x4x2AVX2, dotBF16x4x4AVX512, dotBF16x4x8AVX512, dotBF16x4x4ZAVX512}}
)

// quarterChunk bounds the bytes of rows (four quarters' worth) that halfRowsAVX2 multiplies
// by every pair of a batch's inputs before it moves on: they stay in L2 meanwhile.
// quarterRowBytes is the longest row that batches of three to eight inputs read in quarters:
// on Zen 3 (two threads, `kvref bench --batches`, alternating binaries, medians) stories110M
// f16 (rows of 1,536 bytes) took 14.8 → 13.7 ms a step at batch 3, 16.1 → 12.8 at 4 and
// 32.3 → 30.0 at 8, and with two inputs 11.8 → 9.6; TinyLlama f16 (4,096 bytes), whose
// products at those batches are bound by arithmetic, 129.8 → 134.2 at batch 4 and even at 8.
const (
	quarterChunk    = 128 << 10
	quarterRowBytes = 2048
)

// halfRowsMaxBatch, halfRows4MaxBatch and halfRows8MaxBatch are the largest batches
// MatMulF16 and MatMulBF16 multiply on the stored rows, two inputs at a time (AVX2), four
// (AVX-512) or eight (AVX-512, f16); larger ones
// widen blocks of rows for the matrix kernels, whose register blocking then repays the
// widening.
//
// TinyLlama-shape f16 decode steps on Zen 4 (2 threads, `kvref bench --batches`), stored
// rows against widened blocks: with pairs at AVX-512 batch 2 43–64 against 112–122 ms, 3
// 65–68 against 127–134, 4 79–83 against 125, 8 138–158 against 170–184, 12 212–225
// against 220–242, 16 267–279 against 267–269; at the avx2 level batch 4 79–91 against
// 127–132, 8 144–151 against 177, 12 211–236 against 220–238, 16 280–291 against
// 278–281. With fours (dotF16x4x4AVX512): batch 4 68–79, 8 115–135, 12 168–186 against
// 208–226 widened, 16 228–248 against 260–286, 24 336–338 against 349–366, 32 434–488
// against 464–466. With eights (dotF16x4x8AVX512, f16 only) on Zen 5, against widened
// blocks (2 threads, `kvref bench --prompt 32 --batches`, two alternations, ms a step):
// stories110M batch 32 42.0–43.6 against 54.6–56.8, 48 60.6–61.5 against 68.4–71.5, 64
// 83.4 against 89.8–91.2; TinyLlama batch 32 352 against 514, 64 697 against 834.
const (
	halfRowsMaxBatch  = 8
	halfRows4MaxBatch = 24
	halfRows8MaxBatch = 64
)

// pairBuffers holds the inputs halfRowsAVX2 packs for x4x8.
var pairBuffers = sync.Pool{New: func() any { return new([]float32) }}

func matMulHalf(out, x []float32, w []byte, rows, cols, batch, start, end int, h *halfFormat) {
	rb := 2 * cols
	fastOK := cols%8 == 0 && decodedFastOK(out, x, rows, cols, batch, start, end) && end <= len(w)/rb && !overlapsRows(out, nil, w)
	maxBatch := halfRowsMaxBatch
	if h.fast4.on {
		maxBatch = halfRows4MaxBatch
	}
	if h.fast8 != nil && h.fast8.on {
		maxBatch = halfRows8MaxBatch
	}
	switch {
	case fastOK && h.fast.on && (batch <= maxBatch || !implMatMulAVX.on):
		halfRowsAVX2(out, x, w, rows, cols, batch, start, end, h)
	case fastOK && batch > 1 && implMatMulAVX.on:
		// Each decoded row also asks for the row one block on in L2, which the next block
		// decodes, so that memory works while this block is multiplied.
		MatMulRowsDecoded(out, x, rows, cols, batch, start, end, func(dst []float32, r int) {
			if next := r + DecodedPanelRows; next < end {
				PrefetchL2(w[next*rb : (next+1)*rb])
			}
			h.decode(dst, w[r*rb:(r+1)*rb])
		})
	default:
		matMulHalfGeneric(out, x, w, rows, cols, batch, start, end, h)
	}
}

// halfRowsAVX2 is matMulHalf on the stored rows: four rows at a time against groups of
// four inputs (with AVX-512), pairs and a last odd one, the rows left over one at a time.
// For one or two inputs the four rows are one from each quarter of the piece (the quarter
// kernels, see the quarter walk in matmul_amd64.go), and for more without AVX-512 when the
// rows are short (quarterRowBytes); such a batch takes the quarters quarterChunk bytes of
// rows at a time, so that every pair of inputs finds them in L2. With AVX-512, batches of
// three and more keep four adjacent rows against four inputs at a time (x4x4).
func halfRowsAVX2(out, x []float32, w []byte, rows, cols, batch, start, end int, h *halfFormat) {
	rb := 2 * cols
	r := start
	if q := (end - start) / 4; q > 0 && (batch <= 2 || rb <= quarterRowBytes && !h.fast4.on) {
		c := q
		if batch > 2 {
			c = max(1, quarterChunk/(4*rb))
		}
		for i := start; i < start+q; i += c {
			n := min(c, start+q-i)
			b := 0
			for ; b+2 <= batch; b += 2 {
				h.q4x2(&out[b*rows+i], rows, &w[i*rb], &x[b*cols], n, q, cols, rb)
			}
			if b < batch {
				h.q4(&out[b*rows+i], &w[i*rb], &x[b*cols], n, q, cols, rb)
			}
		}
		r = start + 4*q
	}
	// Groups of eight inputs, then one of four, packed in pairs once for all the rows (x4x8,
	// x4x4z).
	groups8, quads := 0, 0
	var pk []float32
	if h.fast8 != nil && h.fast8.on && batch >= 4 && r+4 <= end {
		groups8, quads = batch/8, batch%8/4
		n := (8*groups8 + 4*quads) * cols
		buf := pairBuffers.Get().(*[]float32)
		defer pairBuffers.Put(buf)
		if cap(*buf) < n {
			*buf = pages.Floats(n)
		}
		*buf = (*buf)[:n]
		pk = *buf
		for g := range groups8 {
			packInputPairs(pk[g*8*cols:], x[g*8*cols:], cols, 8)
		}
		if quads > 0 {
			packInputPairs(pk[groups8*8*cols:], x[groups8*8*cols:], cols, 4)
		}
	}
	for ; r+4 <= end; r += 4 {
		b := 0
		for g := range groups8 {
			h.x4x8(&out[b*rows+r], rows, &w[r*rb], &pk[g*8*cols], cols)
			b += 8
		}
		if quads > 0 {
			h.x4x4z(&out[b*rows+r], rows, &w[r*rb], &pk[b*cols], cols)
			b += 4
		}
		if h.fast4.on {
			for ; b+4 <= batch; b += 4 {
				h.x4x4(&out[b*rows+r], rows, &w[r*rb], &x[b*cols], cols)
			}
		}
		for ; b+2 <= batch; b += 2 {
			h.x4x2(&out[b*rows+r], rows, &w[r*rb], &x[b*cols], cols, rb)
		}
		if b < batch {
			h.x4(&out[b*rows+r], &w[r*rb], &x[b*cols], cols, rb)
		}
	}
	for ; r < end; r++ {
		for b := range batch {
			out[b*rows+r] = h.one(x[b*cols:(b+1)*cols], w[r*rb:(r+1)*rb])
		}
	}
}
