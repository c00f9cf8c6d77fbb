//go:build amd64 && !purego

package kernels

import "sync"

// The batched k-quant kernels (kbatch_avx512_amd64.s) need AVX-512 VNNI, as the row dots'
// (implKBatchVNNI). With AVX2 alone, a VPMADDUBSW per group of four codes and eight vectors
// would cost more than the row dots of the vectors one by one; there the rows meet four
// vectors at a time in the row dots' arithmetic, the codes and scale words unpacked once
// for the four (dotQ2_KV4AVX2 ... dotQ6_KV4AVX2 in kquant_avx2_amd64.s: implKBatchAVX2).
// With VNNI, too, the vectors past the whole tiles go to those kernels when they would
// leave most of a tile's lanes idle (tiledVectors).

//go:noescape
func dotQ4_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)

//go:noescape
func dotQ4_KV8AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)

//go:noescape
func dotQ5_KV8AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)

//go:noescape
func dotQ5_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)

//go:noescape
func dotQ6_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)

//go:noescape
func dotQ2_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)

//go:noescape
func dotQ3_KV4AVX2(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)

//go:noescape
func prepQ4_KAVX512(dst *byte, w *byte, nb int)

//go:noescape
func prepQ5_KAVX512(dst *byte, w *byte, nb int)

//go:noescape
func prepQ6_KAVX512(dst *byte, w *byte, nb int)

//go:noescape
func prepQ2_KAVX512(dst *byte, w *byte, nb int)

//go:noescape
func prepQ3_KAVX512(dst *byte, w *byte, nb int)

//go:noescape
func gemmK32MinAVX512(res *float32, prep *byte, tile *byte, nb, prepStride, shift int, pf *byte, pfStep int)

//go:noescape
func gemmK16MinAVX512(res *float32, prep *byte, tile *byte, nb, prepStride, shift int, pf *byte, pfStep int)

//go:noescape
func gemmK16SignedAVX512(res *float32, prep *byte, tile *byte, nb, prepStride, shift int, pf *byte, pfStep int)

// kBatchKernel is one format's batched kernels: prep prepares a row (nb super-blocks), gemm
// multiplies four prepared rows by a tile, and asks for pfStep bytes from pf on in L2 per
// super-block (the rows to come; pfStep 0: none); shift is the signed types' offset as a
// shift.
type kBatchKernel struct {
	prep  func(dst *byte, w *byte, nb int)
	gemm  func(res *float32, prep *byte, tile *byte, nb, prepStride, shift int, pf *byte, pfStep int)
	shift int
}

// kBatchKernels returns f's batched kernels, or false.
func kBatchKernels(f *kFormat) (kBatchKernel, bool) {
	switch f {
	case &kQ4_K:
		return kBatchKernel{prepQ4_KAVX512, gemmK32MinAVX512, 0}, true
	case &kQ5_K:
		return kBatchKernel{prepQ5_KAVX512, gemmK32MinAVX512, 0}, true
	case &kQ6_K:
		return kBatchKernel{prepQ6_KAVX512, gemmK16SignedAVX512, 5}, true
	case &kQ2_K:
		return kBatchKernel{prepQ2_KAVX512, gemmK16MinAVX512, 0}, true
	case &kQ3_K:
		return kBatchKernel{prepQ3_KAVX512, gemmK16SignedAVX512, 2}, true
	}
	return kBatchKernel{}, false
}

func kBatchFast() bool { return implKBatchVNNI.on }

func kBatchOcts() bool { return implKBatchAVX2.on }

// kPrepStride is the size of one super-block of a row prepared for the batched kernels:
// the 256 codes (bytes), the scale differences (kBatch kernels sum the products
// cumulatively: Δ_j = sc_j − sc_{j+1}, sixteen int32 or eight for the types with scales per
// 32 values), the min or scale pairs for the block sums (two int16 each: eight for the
// types with a scale per 16 values, [m, m] or [sc, sc] against a pair of block sums; four
// for Q4_K and Q5_K, [m_2k, m_2k+1] against a pair of 32-value sums), 128 times Σ sc·q
// (the inputs' codes carry +128), and d and dmin as float32.
const (
	kPrepDeltaOffset = KBlockLen
	kPrepPairsOffset = kPrepDeltaOffset + 64
	kPrepKOffset     = kPrepPairsOffset + 32
	kPrepDOffset     = kPrepKOffset + 4
	kPrepStride      = 384
)

// kPrepScratch recycles the prepared rows of dotKBatchFast.
var kPrepScratch = sync.Pool{New: func() any { return new([]byte) }}

// dotKBatchFast runs the tiled vectors of x through the VNNI kernels, the rest through
// dotKBatchAVX2 (or the row dots when it declines them), and reports false when it ran
// none of them.
func dotKBatchFast(f *kFormat, out []float32, stride int, x *Q8KBatch, w []byte, rows, rb int) bool {
	if x.tiled == 0 {
		return dotKBatchAVX2(f, out, stride, x, w, rows, rb)
	}
	k, ok := kBatchKernels(f)
	if !ok {
		return false
	}
	nb, count := x.n/KBlockLen, x.tiled
	tiles := (count + KBatchTile - 1) / KBatchTile
	ps := kPrepScratch.Get().(*[]byte)
	defer kPrepScratch.Put(ps)
	prepStride := nb * kPrepStride
	*ps = grow(*ps, 4*prepStride)
	prep := *ps
	var res [4 * KBatchTile]float32
	for r0 := 0; r0 < rows; r0 += 4 {
		n4 := min(4, rows-r0)
		for k4 := range 4 {
			// Rows past the end repeat the last one; their results are not stored.
			r := min(r0+k4, rows-1)
			k.prep(&prep[k4*prepStride], &w[r*rb], nb)
		}
		// The first tile's product asks for the next four rows in L2, a super-block's
		// share of them at a time, so that their prep finds them there: without it each
		// prep waited for main memory (BenchmarkDotKBatch/batch16mem/Q4_K, one thread on
		// Zen 4: 11.4 → 8.8 ms; the rows requested at once before the prep gave 9.8).
		pf, pfStep := &w[0], 0
		if next := (r0 + 4) * rb; next < len(w) {
			pf, pfStep = &w[next], 4*rb/nb
		}
		for t := range tiles {
			k.gemm(&res[0], &prep[0], &x.tiles[t*nb*kTileStride], nb, prepStride, k.shift, pf, pfStep)
			pfStep = 0
			for v := range min(KBatchTile, count-t*KBatchTile) {
				o := out[(t*KBatchTile+v)*stride+r0:]
				if n4 == 4 {
					*(*[4]float32)(o) = *(*[4]float32)(res[4*v:])
				} else {
					copy(o[:n4], res[4*v:])
				}
			}
		}
	}
	if count < len(x.xs) && !dotKBatchAVX2(f, out, stride, x, w, rows, rb) {
		kRowsPanels(f, out, stride, x, w, rows, rb, count)
	}
	return true
}

// dotKBatchAVX2 is the batched product of k-quant rows with AVX2 for the vectors of x past
// the tiled ones: panels of rows, each against the vectors eight at a time (x.octs;
// dotQ4_KV8AVX2, dotQ5_KV8AVX2) or four at a time, the vectors left over through the row
// dots (two at a time where kPairKernel). It reports false, having run nothing, without
// four such vectors or a kernel, or where the row dots take pairs (kPairKernel), which then
// take all of them.
func dotKBatchAVX2(f *kFormat, out []float32, stride int, x *Q8KBatch, w []byte, rows, rb int) bool {
	var kern, kern8 func(out *float32, w *byte, xq *byte, nb, rb, tiles, outStride int)
	switch f {
	case &kQ4_K:
		kern, kern8 = dotQ4_KV4AVX2, dotQ4_KV8AVX2
	case &kQ5_K:
		kern, kern8 = dotQ5_KV4AVX2, dotQ5_KV8AVX2
	case &kQ6_K:
		kern = dotQ6_KV4AVX2
	case &kQ2_K:
		kern = dotQ2_KV4AVX2
	case &kQ3_K:
		kern = dotQ3_KV4AVX2
	}
	if kPairKernel(f) != nil {
		return false // the row dots two vectors at a time beat fours (kPairKernel)
	}
	base := x.tiled
	nb, quads := x.n/KBlockLen, (len(x.xs)-base)/4
	octBytes := nb * 8 * q8KStride
	if !implKBatchAVX2.on || kern == nil || quads == 0 || len(x.octs) != (quads+1)/2*octBytes {
		return false
	}
	panel := panelRows(rb)
	for r0 := 0; r0 < rows; r0 += panel {
		r1 := min(r0+panel, rows)
		for q := 0; q < quads; {
			xq := &x.octs[q/2*octBytes+q%2*4*q8KStride]
			o := &out[(base+4*q)*stride+r0]
			if kern8 != nil && q%2 == 0 && q+1 < quads {
				kern8(o, &w[r0*rb], xq, nb, rb, r1-r0, stride)
				q += 2
				continue
			}
			kern(o, &w[r0*rb], xq, nb, rb, r1-r0, stride)
			q++
		}
		kRowsVectors(f, out, stride, x, w[r0*rb:r1*rb], r0, r1, base+4*quads)
	}
	return true
}
