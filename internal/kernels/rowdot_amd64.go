//go:build amd64 && !purego

package kernels

import "unsafe"

// The row dots' fast paths (registry.go: implF16AVX2, implBF16AVX2, implDecodeF16AVX2)
// need AVX2 (VPMOVZXWD and the other 256-bit integer instructions) and F16C (VCVTPH2PS);
// nothing from FMA is used. The four-input AVX-512 kernels (rowdot_avx512_amd64.s) use its
// extra registers, not its wider vectors.

// The assembly kernels (rowdot_avx2_amd64.s). n counts values; the x pointers address float32
// vectors, the w pointers stored rows.

// dotF16AVX2Asm returns DotF16 of the n8 values at x and w (n8 a multiple of 8) plus the
// zero-padded tail group xt, wt (eight floats, eight halves), added as a last group of
// eight. Adding a tail of +0 products changes no lane (a lane is never -0), so the tail
// may be all zero.
//
//go:noescape
func dotF16AVX2Asm(x *float32, w *byte, n8 int, xt *[8]float32, wt *[8]uint16) float32

// dotBF16AVX2Asm is dotF16AVX2Asm for bfloat16 values.
//
//go:noescape
func dotBF16AVX2Asm(x *float32, w *byte, n8 int, xt *[8]float32, wt *[8]uint16) float32

// dotF16x4AVX2 sets out[k] = DotF16(x, w_k) for the four rows w_k starting at w +
// k·stride bytes (2n for a matrix), n > 0 a multiple of 8, each in its own accumulator.
//
//go:noescape
func dotF16x4AVX2(out *float32, w *byte, x *float32, n, stride int)

// dotBF16x4AVX2 is dotF16x4AVX2 for bfloat16 rows.
//
//go:noescape
func dotBF16x4AVX2(out *float32, w *byte, x *float32, n, stride int)

// dotF16x4NextAVX2 is dotF16x4AVX2 that prefetches the four rows starting at next (stride
// bytes apart) instead of the four after its own.
//
//go:noescape
func dotF16x4NextAVX2(out *float32, w *byte, x *float32, n, stride int, next *byte)

// dotF16Q4AVX2 sets out[i+k·q] = DotF16(x, w_{i+k·q}) for i < c and k < 4 (0 < c ≤ q), the
// rows w_r starting at w + r·stride bytes, n > 0 a multiple of 8: dotF16x4AVX2's arithmetic
// on the first c rows of the four quarters of 4q rows side by side, each quarter read as
// one stream (the quarter walk, matmul_amd64.go).
//
//go:noescape
func dotF16Q4AVX2(out *float32, w *byte, x *float32, c, q, n, stride int)

// dotBF16Q4AVX2 is dotF16Q4AVX2 for bfloat16 rows.
//
//go:noescape
func dotBF16Q4AVX2(out *float32, w *byte, x *float32, c, q, n, stride int)

// dotF16Q4x2AVX2 is dotF16Q4AVX2 against two input vectors, x and x+n (n floats each): row
// r of input j goes to out[j·outStride + r], each row's values decoded once for both.
//
//go:noescape
func dotF16Q4x2AVX2(out *float32, outStride int, w *byte, x *float32, c, q, n, stride int)

// dotBF16Q4x2AVX2 is dotF16Q4x2AVX2 for bfloat16 rows.
//
//go:noescape
func dotBF16Q4x2AVX2(out *float32, outStride int, w *byte, x *float32, c, q, n, stride int)

// dotF16x4x2AVX2 is dotF16x4AVX2 against two input vectors, x and x+n (n floats each):
// row k of input j goes to out[j·outStride + k], each rows' values decoded once for both.
//
//go:noescape
func dotF16x4x2AVX2(out *float32, outStride int, w *byte, x *float32, n, stride int)

// dotBF16x4x2AVX2 is dotF16x4x2AVX2 for bfloat16 rows.
//
//go:noescape
func dotBF16x4x2AVX2(out *float32, outStride int, w *byte, x *float32, n, stride int)

// dotF16x4x4AVX512 is dotF16x4x2AVX2 for four consecutive rows (2n bytes each) against four
// consecutive inputs, in the YMM registers AVX-512 VL adds (rowdot_avx512_amd64.s).
//
//go:noescape
func dotF16x4x4AVX512(out *float32, outStride int, w *byte, x *float32, n int)

// dotF16x4x8AVX512 is dotF16x4x4AVX512 for eight inputs packed by packInputPairs at xp,
// two (row, input) pairs' eight lanes in each ZMM accumulator (rowdot_avx512_amd64.s).
//
//go:noescape
func dotF16x4x8AVX512(out *float32, outStride int, w *byte, xp *float32, n int)

// dotF16x4x4ZAVX512 is dotF16x4x8AVX512 for four inputs packed by packInputPairs at xp:
// two (row, input) pairs' eight lanes in each of eight ZMM accumulators, where
// dotF16x4x4AVX512 keeps sixteen YMM ones (rowdot_avx512_amd64.s).
//
//go:noescape
func dotF16x4x4ZAVX512(out *float32, outStride int, w *byte, xp *float32, n int)

// dotBF16x4x8AVX512 and dotBF16x4x4ZAVX512 are dotF16x4x8AVX512 and dotF16x4x4ZAVX512 for
// bfloat16 rows, each row's values widened as dotBF16x4AVX2 widens them
// (rowdot_avx512_amd64.s).
//
//go:noescape
func dotBF16x4x8AVX512(out *float32, outStride int, w *byte, xp *float32, n int)

//go:noescape
func dotBF16x4x4ZAVX512(out *float32, outStride int, w *byte, xp *float32, n int)

// packInputPairs lays out n inputs (n even) of cols floats each (one after another in x,
// cols a multiple of 8) for dotF16x4x8AVX512 and dotBF16x4x8AVX512 (n = 8) or
// dotF16x4x4ZAVX512 and dotBF16x4x4ZAVX512 (n = 4) in dst
// (n·cols floats): for each group of eight columns, the pairs (0, 1), (2, 3), ..., each
// input 2p's eight floats and then input 2p+1's.
func packInputPairs(dst, x []float32, cols, n int) {
	dst, x = dst[:n*cols], x[:n*cols]
	for c := 0; c < cols; c += 8 {
		d := dst[n*c : n*c+8*n]
		for j := range n {
			o := 16*(j/2) + 8*(j%2)
			copy(d[o:o+8], x[j*cols+c:j*cols+c+8])
		}
	}
}

// dotBF16x4x4AVX512 is dotF16x4x4AVX512 for bfloat16 rows.
//
//go:noescape
func dotBF16x4x4AVX512(out *float32, outStride int, w *byte, x *float32, n int)

// halfTail copies the last len(x)%8 values of x and of the 16-bit row into zeroed groups
// of eight and returns the number of whole values before them.
func halfTail(x []float32, row []byte, xt *[8]float32, wt *[8]uint16) int {
	n := len(x)
	n8 := n &^ 7
	for j := 0; n8+j < n; j++ {
		xt[j] = x[n8+j]
		wt[j] = le16(row[2*(n8+j):])
	}
	return n8
}

// dotF16AVX2 is dotF16Generic computed by dotF16AVX2Asm; row holds exactly 2·len(x) bytes.
func dotF16AVX2(x []float32, row []byte) float32 {
	var xt [8]float32
	var wt [8]uint16
	n8 := halfTail(x, row, &xt, &wt)
	return dotF16AVX2Asm(unsafe.SliceData(x), unsafe.SliceData(row), n8, &xt, &wt)
}

// dotBF16AVX2 is dotBF16Generic computed by dotBF16AVX2Asm; row holds exactly 2·len(x)
// bytes.
func dotBF16AVX2(x []float32, row []byte) float32 {
	var xt [8]float32
	var wt [8]uint16
	n8 := halfTail(x, row, &xt, &wt)
	return dotBF16AVX2Asm(unsafe.SliceData(x), unsafe.SliceData(row), n8, &xt, &wt)
}

func dotF16(x []float32, row []byte) float32 {
	if implF16AVX2.on {
		return dotF16AVX2(x, row)
	}
	return dotF16Generic(x, row)
}

func dotBF16(x []float32, row []byte) float32 {
	if implBF16AVX2.on {
		return dotBF16AVX2(x, row)
	}
	return dotBF16Generic(x, row)
}

// rowsAVX2 runs a *Rows kernel on the fast path: blocks of four rows with x4 (when n4 > 0,
// the length argument x4 takes), then the remaining rows one at a time with dot. When out
// overlaps x or w, a four-row block could read an output it has already written (the
// plain loop writes out[r] before it reads row r+1), so such calls go one row at a time,
// which is the plain loop.
func rowsAVX2(out, x []float32, w []byte, rb, n4 int, x4 func(out *float32, w *byte, x *float32, n int), dot func(x []float32, row []byte) float32) {
	r := 0
	if n4 > 0 && len(out) >= 4 && !overlapsRows(out, x, w) {
		for ; r+4 <= len(out); r += 4 {
			x4(&out[r], &w[r*rb], unsafe.SliceData(x), n4)
		}
	}
	for ; r < len(out); r++ {
		out[r] = dot(x, w[r*rb:(r+1)*rb])
	}
}

// overlapsRows reports whether out shares memory with x or w.
func overlapsRows(out, x []float32, w []byte) bool {
	o0 := uintptr(unsafe.Pointer(unsafe.SliceData(out)))
	o1 := o0 + uintptr(len(out))*4
	x0 := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	w0 := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
	return (len(x) > 0 && o0 < x0+uintptr(len(x))*4 && x0 < o1) ||
		(len(w) > 0 && o0 < w0+uintptr(len(w)) && w0 < o1)
}

func dotF16Rows(out, x []float32, w []byte, rb int) {
	halfRows(out, x, w, rb, implF16AVX2.on, dotF16Generic, dotF16x4AVX2, dotF16AVX2)
}

// dotF16RowsStrided is dotF16RowsStridedGeneric with dotF16x4AVX2 four rows at a time
// (len(x) a positive multiple of 8, out overlapping neither input) and dotF16 for the rest.
func dotF16RowsStrided(out, x []float32, w []byte, stride int) {
	r := 0
	if implF16AVX2.on && len(x) > 0 && len(x)%8 == 0 && !overlapsRows(out, x, w) {
		for ; r+4 <= len(out); r += 4 {
			dotF16x4AVX2(&out[r], &w[r*stride], unsafe.SliceData(x), len(x), stride)
		}
	}
	for ; r < len(out); r++ {
		out[r] = dotF16(x, w[r*stride:r*stride+2*len(x)])
	}
}

// dotF16RowsStridedNext is dotF16RowsStrided that prefetches the rows of next (laid out as
// w's) while it reads w's: the four-row kernel asks for the same four rows of next.
func dotF16RowsStridedNext(out, x []float32, w []byte, stride int, next []byte) {
	r := 0
	if implF16AVX2.on && len(x) > 0 && len(x)%8 == 0 && !overlapsRows(out, x, w) {
		for ; r+4 <= len(out); r += 4 {
			pf := &w[r*stride] // no next row here: the hints go to rows already read
			if r*stride < len(next) {
				pf = &next[r*stride]
			}
			dotF16x4NextAVX2(&out[r], &w[r*stride], unsafe.SliceData(x), len(x), stride, pf)
		}
	}
	for ; r < len(out); r++ {
		out[r] = dotF16(x, w[r*stride:r*stride+2*len(x)])
	}
}

func dotBF16Rows(out, x []float32, w []byte, rb int) {
	halfRows(out, x, w, rb, implBF16AVX2.on, dotBF16Generic, dotBF16x4AVX2, dotBF16AVX2)
}

// halfRows runs a 16-bit row product: the portable rows without fast, else four rows at a
// time with x4 when len(x) is a positive multiple of 8, and the rest one by one with dot.
func halfRows(out, x []float32, w []byte, rb int, fast bool, generic func(x []float32, row []byte) float32, x4 func(out *float32, w *byte, x *float32, n, stride int), dot func(x []float32, row []byte) float32) {
	if !fast {
		rowsGeneric(out, x, w, rb, generic)
		return
	}
	n4 := 0
	if len(x) > 0 && len(x)%8 == 0 {
		n4 = len(x)
	}
	rowsAVX2(out, x, w, rb, n4, func(out *float32, w *byte, x *float32, n int) { x4(out, w, x, n, rb) }, dot)
}
