package quant

// The iq4_nl cache type is ggml's block_iq4_nl (layout in cache_block.go): each value is
// d times one of sixteen fixed grid points, kvalues_iq4nl, which are spaced more closely
// near zero, where most values of a roughly normal block lie.
//
// Quantization is ggml's quantize_row_iq4_nl_ref, which llama.cpp's CPU backend uses for
// an iq4_nl cache: quantize_row_iq4_nl_impl with no importance weights and ntry = −1.
// For each block, in float32:
//
//	max = the value of largest magnitude (the first one, on ties); if |max| < 1e-15 the
//	      block stores d = 0 and zero codes
//	d₀  = max/−127, id = 1/d₀, so that max itself maps to the grid's end, −127
//	c   = the index of the grid point nearest to id·x (best_index_int8; a value exactly
//	      between two points takes the upper one)
//	d   = Σ w·q·x / Σ w·q², q = kvalues[c], w = x²: the least-squares scale for the
//	      codes, with each value weighted by its square
//
// and the block stores fp16(d) and the codes c. ggml's weight quantizer (quantize_iq4_nl,
// what llama-quantize runs) is the same function with ntry = 7: d₀ = max/127, then 15
// more candidate scales id = (itry − 127)/max, itry = −7..7, of which the one with the
// smallest weighted error wins, and finally every code is chosen again for the winning
// scale. encodeIQ4NL takes ntry so that the tests can hold it to llama-quantize's bytes.
//
// This is ggml as of ggml-org/llama.cpp 01243c587fec. Older ggml, including c392e50 of
// ../shared/bin, differs in two places only: a block with |max| < 1e-15 keeps whatever
// codes the previous block of the row left in its scratch array (indeterminate for the
// first block; the stored d is 0, so the values are zeros either way, only the sign of
// zero may differ), and best_index_int8 was a binary search comparing x − kvalues[i−1]
// with kvalues[i] − x, which picks the same index for every finite x (near a midpoint
// both differences are exact in float32) and differs for NaN only.
//
// Inputs are expected to be finite and below about 1.8e19 in magnitude: beyond that the
// weight x² overflows to +Inf and the scale becomes NaN, as in ggml (long before that,
// above about 8.3e6, the fp16 scale overflows to ±Inf).

// iq4nlValues is ggml's kvalues_iq4nl.
var iq4nlValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

const (
	iq4nlCacheTries  = -1    // ntry of quantize_row_iq4_nl_ref, what the cache uses
	iq4nlWeightTries = 7     // ntry of quantize_iq4_nl, what llama-quantize uses
	iq4nlMinMax      = 1e-15 // ggml's GROUP_MAX_EPS: a block whose |max| is below it stores zeros
	iq4nlPoints      = 16    // grid points
)

// iq4nlIndex is ggml's best_index_int8 for kvalues_iq4nl: the index of the grid point
// nearest to x, the upper one when x lies exactly between two. It compares x+x with the
// sum of two neighbouring grid points, both exact, in a branch-free binary search.
func iq4nlIndex(x float32) uint8 {
	x2 := x + x
	idx := 0
	for step := iq4nlPoints / 2; step > 0; step /= 2 {
		j := idx + step
		if x2 >= float32(int(iq4nlValues[j-1])+int(iq4nlValues[j])) {
			idx = j
		}
	}
	return uint8(idx)
}

// iq4nlFit returns Σ w·q·x and Σ w·q² over the block x with weights w = x², where q is the
// grid value chosen for id·x, summed in element order with every product rounded as ggml's
// C computes them ((w·q)·x and (w·q)·q). When codes is not nil it receives the indices.
func iq4nlFit(x []float32, id float32, codes *[blockLen]uint8) (sumqx, sumq2 float32) {
	for j, v := range x {
		c := iq4nlIndex(float32(id * v))
		if codes != nil {
			codes[j] = c
		}
		q := float32(iq4nlValues[c])
		w := float32(v * v)
		wq := float32(w * q)
		sumqx += float32(wq * v)
		sumq2 += float32(wq * q)
	}
	return sumqx, sumq2
}

// encodeIQ4NL quantizes whole blocks as quantize_row_iq4_nl_impl does with ntry tries
// (iq4nlCacheTries for the cache, iq4nlWeightTries for llama-quantize's weights).
func encodeIQ4NL(dst []byte, src []float32, ntry int) {
	var codes [blockLen]uint8
	for blk := 0; blk*blockLen < len(src); blk++ {
		x := src[blk*blockLen : (blk+1)*blockLen]
		out := dst[blk*iq4nlBlockBytes : (blk+1)*iq4nlBlockBytes]
		d := iq4nlScale(x, ntry, &codes)
		storeF16(out, d)
		if ntry > 0 { // choose every code again for the winning scale
			var id float32
			if d != 0 {
				id = 1 / d
			}
			for j, v := range x {
				codes[j] = iq4nlIndex(float32(id * v))
			}
		}
		qs := out[2:iq4nlBlockBytes]
		for j := range qs {
			qs[j] = codes[j] | codes[blockHalf+j]<<4
		}
	}
}

// iq4nlScale returns the scale quantize_row_iq4_nl_impl finds for one block x with ntry
// tries, and sets codes to the indices of its first pass (zeros for a block below
// iq4nlMinMax).
func iq4nlScale(x []float32, ntry int, codes *[blockLen]uint8) float32 {
	amax, xmax := extreme(x) // ggml's amax and max
	if amax < iq4nlMinMax {
		clear(codes[:])
		return 0
	}
	grid0 := float32(iq4nlValues[0])
	d := xmax / grid0
	if ntry > 0 {
		d = -xmax / grid0
	}
	sumqx, sumq2 := iq4nlFit(x, 1/d, codes)
	d = 0
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := float32(d * sumqx)
	for itry := -ntry; itry <= ntry; itry++ {
		id := float32(itry+int(iq4nlValues[0])) / xmax
		sumqx, sumq2 := iq4nlFit(x, id, nil)
		if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
			d = sumqx / sumq2
			best = float32(d * sumqx)
		}
	}
	return d
}

// encodeIQ4NLCache is the cache's iq4_nl encoder: quantize_row_iq4_nl_ref's search.
func encodeIQ4NLCache(dst []byte, src []float32) { encodeIQ4NL(dst, src, iq4nlCacheTries) }
