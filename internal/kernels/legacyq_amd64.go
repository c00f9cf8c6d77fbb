//go:build amd64 && !purego

package kernels

import (
	"encoding/binary"
	"unsafe"

	"github.com/kvref/kvref/internal/half"
)

// The legacy row dots run in assembly on CPUs with AVX-512 VNNI (legacyq_avx512_amd64.s,
// as the Q8_0 × Q8_0 kernel: implLegacyQ8VNNI) and on those with AVX2 and F16C
// (legacyq_avx2_amd64.s: useRowAVX2), four rows at a time, the quarters of the rows side by
// side as four sequential streams.

// legacyKernel sets out[k·outStride] to the dot of the row at w + k·stride bytes with the
// input (codes xq, correction terms corr, scales dl and sums sl, eight to a block), for
// k = 0..3; nb > 0 blocks per row; idx is the block layout's VPERMW table.
type legacyKernel func(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)

//go:noescape
func dotQ4_0Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)

//go:noescape
func dotQ4_1Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)

//go:noescape
func dotQ5_0Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)

//go:noescape
func dotQ5_1Q8x4AVX512(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)

// The AVX2 kernels take the same arguments and ignore idx.

//go:noescape
func dotQ4_0Q8x4AVX2(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)

//go:noescape
func dotQ4_1Q8x4AVX2(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)

//go:noescape
func dotQ5_0Q8x4AVX2(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)

//go:noescape
func dotQ5_1Q8x4AVX2(out *float32, w *byte, xq *int8, corr *int32, dl, sl *float32, nb, stride, outStride int, idx *[256]byte)

// f16TableBase is half.F16Table's first entry, where the AVX2 kernels look up the blocks'
// scales (L2SETUP loads it; no Go code reads it).
//
//lint:ignore U1000 read by legacyq_avx2_amd64.s
var f16TableBase = &half.F16Table[0]

// legacyIdx builds a block layout's VPERMW table for a pair of blocks of bb bytes loaded
// into one register (the second at byte bb): the codes (words 0-31: each block's 16 bytes
// of nibbles at byte qs, twice), the scales d (words 32-47: the first block's eight times,
// then the second's), the mins m at byte 2 (words 64-79, likewise) and the fifth bits qh
// (words 96-99: the two words of the first block's, then of the second's).
func legacyIdx(bb, qs, qh int) *[256]byte {
	var t [256]byte
	word := func(i, w int) { binary.LittleEndian.PutUint16(t[2*i:], uint16(w)) }
	for b := range 2 {
		base := b * bb / 2
		for j := range 8 {
			word(16*b+j, base+qs/2+j)
			word(16*b+8+j, base+qs/2+j)
			word(32+8*b+j, base)
			word(64+8*b+j, base+1)
		}
		word(96+2*b, base+qh/2)
		word(96+2*b+1, base+qh/2+1)
	}
	return &t
}

// legacyKernels pairs each legacy format with its kernels and table.
var legacyKernels = map[*legacyFormat]struct {
	x4Kernels[legacyKernel]
	idx *[256]byte
}{
	&lQ4_0: {x4Kernels[legacyKernel]{dotQ4_0Q8x4AVX512, dotQ4_0Q8x4AVX2}, legacyIdx(Q4_0BlockBytes, 2, 0)},
	&lQ4_1: {x4Kernels[legacyKernel]{dotQ4_1Q8x4AVX512, dotQ4_1Q8x4AVX2}, legacyIdx(Q4_1BlockBytes, 4, 0)},
	&lQ5_0: {x4Kernels[legacyKernel]{dotQ5_0Q8x4AVX512, dotQ5_0Q8x4AVX2}, legacyIdx(Q5_0BlockBytes, 6, 2)},
	&lQ5_1: {x4Kernels[legacyKernel]{dotQ5_1Q8x4AVX512, dotQ5_1Q8x4AVX2}, legacyIdx(Q5_1BlockBytes, 8, 4)},
}

func dotLegacyRowsFast(f *legacyFormat, out []float32, x *Q8Input, w []byte, rb int) {
	k := legacyKernels[f]
	kernel, ok := k.pick(implLegacyQ8VNNI, implLegacyQ8AVX2)
	if !ok || len(out) == 0 || overlapsRows(out, nil, w) {
		legacyRowsGeneric(f, out, x, w, rb)
		return
	}
	nb := x.n / QBlockLen
	xq, corr := unsafe.SliceData(x.qs), unsafe.SliceData(x.corr)
	dl, sl := unsafe.SliceData(x.dLanes), unsafe.SliceData(x.sLanes)
	forRowQuarters(len(out), rb, func(r, stride, outStride int) {
		kernel(&out[r], &w[r*rb], xq, corr, dl, sl, nb, stride, outStride, k.idx)
	})
}
