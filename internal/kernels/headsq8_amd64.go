//go:build amd64 && !purego

package kernels

import (
	"unsafe"

	"github.com/kvref/kvref/internal/half"
)

// dotQ8_0x4NextAVX2 sets out[k] to dotQ8_0Generic of the 32·nb floats at x and row k of
// the four rows of nb Q8_0 blocks at w (stride bytes apart), k < 4: each block's scale
// looked up in table (half.F16Table) and broadcast by the load, its values widened eight
// at a time (VPMOVSXBD, VCVTDQ2PS: exact) and multiplied by it (VMULPS: float32(q)·d), then
// MULADD into the row's lanes and ROW4END, dotF16x4AVX2's arithmetic after the widening.
// It asks for the same blocks of the four rows at next (stride bytes apart) into L2 as it
// goes. nb > 0. Implemented in headsq8_avx2_amd64.s.
//
//go:noescape
func dotQ8_0x4NextAVX2(out *float32, w *byte, x *float32, nb, stride int, next *byte, table *float32)

// axpyQ8_0RowsNextAVX2Asm adds a[t] times row t's nb decoded Q8_0 blocks (rows stride
// bytes apart at x) to the 32·nb floats at dst for t < rows, in order: a block's 32
// columns in four YMM accumulators, loaded once, updated for every row (the values
// widened as dotQ8_0x4NextAVX2 widens them, then VMULPS by a[t] and VADDPS, Axpy's
// arithmetic) and stored once. With each row's block it asks for the bytes next bytes
// further (a distance: it may lead anywhere) into L2. nb > 0, rows > 0. Implemented in
// headsq8_avx2_amd64.s.
//
//go:noescape
func axpyQ8_0RowsNextAVX2Asm(dst, a *float32, x *byte, nb, stride, rows, next int, table *float32)

// dotQ8_0RowsStridedNext is dotQ8_0RowsStridedGeneric with dotQ8_0x4NextAVX2 four rows at
// a time, prefetching the same rows of next (laid out as w's), and the generic row for
// the rest.
func dotQ8_0RowsStridedNext(out, x []float32, w []byte, stride int, next []byte) {
	r := 0
	nb := len(x) / QBlockLen
	if implQ8HeadsAVX2.on && nb > 0 && !overlapsRows(out, x, w) {
		for ; r+4 <= len(out); r += 4 {
			pf := &w[r*stride] // no next row here: the hints go to rows already read
			if r*stride < len(next) {
				pf = &next[r*stride]
			}
			dotQ8_0x4NextAVX2(&out[r], &w[r*stride], unsafe.SliceData(x), nb, stride, pf, &half.F16Table[0])
		}
	}
	for ; r < len(out); r++ {
		out[r] = dotQ8_0Generic(x, w[r*stride:])
	}
}

// axpyQ8_0RowsNext is axpyQ8_0RowsGeneric computed by axpyQ8_0RowsNextAVX2Asm, which
// prefetches the rows of next (laid out as x's) while it reads x's.
func axpyQ8_0RowsNext(dst, a []float32, x []byte, stride int, next []byte) {
	nb := len(dst) / QBlockLen
	if !implQ8HeadsAVX2.on || nb == 0 || len(a) == 0 || overlapsRows(dst, a, x) {
		axpyQ8_0RowsGeneric(dst, a, x, stride)
		return
	}
	axpyQ8_0RowsNextAVX2Asm(unsafe.SliceData(dst), unsafe.SliceData(a), unsafe.SliceData(x), nb, stride, len(a), distance(x, next), &half.F16Table[0])
}
