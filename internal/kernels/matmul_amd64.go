//go:build amd64 && !purego

package kernels

import "unsafe"

// dot4x1AVX sets out[k] = Dot(x, w_k) for the four weight rows w_k = w[k*n:(k+1)*n],
// k = 0..3, each in its own YMM accumulator with Dot's exact lane order; the four
// independent chains keep the adders busy while the rows stream in. Implemented in
// matmul_avx_amd64.s.
//
//go:noescape
func dot4x1AVX(out, w, x *float32, n int)

// dot4x2AVX sets out[j*outStride+k] = Dot(x_j, w_k) for the four weight rows
// w_k = w[k*n:(k+1)*n] and the two input vectors x_j = x[j*n:(j+1)*n]: a register block of
// 4 × 2 YMM accumulators, each weight block loaded once for both vectors, each output in
// Dot's exact lane order. Implemented in matmul_avx_amd64.s.
//
//go:noescape
func dot4x2AVX(out *float32, outStride int, w, x *float32, n int)

// dot4x4AVX512 is dot4x2AVX for four input vectors x_0..x_3, in ZMM registers that each
// hold two eight-lane accumulators (the same row against two inputs), so that one VMULPS
// and one VADDPS do the work of two. Needs AVX-512F. Implemented in matmul_avx512_amd64.s.
//
//go:noescape
func dot4x4AVX512(out *float32, outStride int, w, x *float32, n int)

// packPairs8AVX512 packs the eight input vectors at x (n floats each, consecutive) for
// gemm4x8AVX512 into dst (8·n floats): block b of vectors 2p and 2p+1 side by side at
// dst[64b+16p:]. n must be a positive multiple of 8. Implemented in matmul_avx512_amd64.s.
//
//go:noescape
func packPairs8AVX512(dst, x *float32, n int)

// matMulRowsAVX is matMulRowsGeneric computed by the four-row assembly kernels, for
// products that gemmAVX does not take (cols not a multiple of 8): each group of four rows
// meets the vectors four (dot4x4AVX512, with AVX-512 when wide is true), two and one at a
// time; the last (end-start) mod 4 rows go one Dot at a time. The caller has checked the
// arguments with matMulRowsFastOK.
func matMulRowsAVX(out, w, x []float32, rows, cols, batch, start, end int, wide bool) {
	quads := start + (end-start)&^3 // rows [start, quads) go four at a time
	for r := start; r < quads; r += 4 {
		rows4(out, &w[r*cols], x, rows, cols, r, 0, batch, wide)
	}
	for r := quads; r < end; r++ {
		wr := &w[r*cols]
		for b := range batch {
			out[b*rows+r] = dotAVXAsm(&x[b*cols], wr, cols)
		}
	}
}

// rows4 computes the outputs of the four rows r..r+3 (the first at wq, n = cols floats
// apart) for the input vectors [b0, batch): four at a time with dot4x4AVX512 when wide,
// then two and one at a time.
func rows4(out []float32, wq *float32, x []float32, rows, cols, r, b0, batch int, wide bool) {
	b := b0
	if wide {
		for ; b+4 <= batch; b += 4 {
			dot4x4AVX512(&out[b*rows+r], rows, wq, &x[b*cols], cols)
		}
	}
	for ; b+2 <= batch; b += 2 {
		dot4x2AVX(&out[b*rows+r], rows, wq, &x[b*cols], cols)
	}
	if b < batch {
		dot4x1AVX(&out[b*rows+r], wq, &x[b*cols], cols)
	}
}

// matVecAVX is matMulRowsGeneric for one input vector (decode), cols a positive multiple
// of 8: nothing to reuse, so the weights are read as sequential streams, four rows at a
// time, one from each quarter of the piece (dotRowsQ4AVX: four long streams, each with its
// row two on prefetched into L2; see "The quarter walk" below), and the last rows one by
// one. The caller has checked the arguments with matMulRowsFastOK.
func matVecAVX(out, w, x []float32, cols, start, end int) {
	n4 := (end - start) &^ 3
	if n4 > 0 {
		dotRowsQ4AVX(&out[start], &w[start*cols], &x[0], n4/4, cols, cols)
	}
	if r := start + n4; r < end {
		dotRowsAVX(&out[r], &w[r*cols], &x[0], end-r, cols, cols)
	}
}

// dotRowsStrided is dotRowsStridedGeneric with dotRowsX4AVX and dotRowsAVX when the rows
// are a positive multiple of 8 long and out overlaps neither input.
func dotRowsStrided(out, x, w []float32, stride int) {
	n := len(x)
	if !implMatVecAVX.on || n == 0 || n%8 != 0 || overlap(out, w) || overlap(out, x) {
		dotRowsStridedGeneric(out, x, w, stride)
		return
	}
	n4 := len(out) &^ 3
	if n4 > 0 {
		dotRowsX4AVX(&out[0], &w[0], &x[0], n4, n, stride)
	}
	if n4 < len(out) {
		dotRowsAVX(&out[n4], &w[n4*stride], &x[0], len(out)-n4, n, stride)
	}
}

// dotRowsAVX sets out[r] = Dot(x, w_r) for the rows weight rows w_r =
// w[r*stride:r*stride+n], reading them as one stream when stride is n: the batch-1 (decode)
// product. rows must be at least 1 and n a positive multiple of 8. Implemented in
// matmul_avx_amd64.s.
//
//go:noescape
func dotRowsAVX(out, w, x *float32, rows, n, stride int)

// The quarter walk: batch-1 products (matVecAVX, and MatMulF16 and MatMulBF16 of one or
// two inputs) read their rows as the four quarters of a piece side by side rather than four
// adjacent rows at a time. On AMD Zen 3 one core read a 768-column f16 matrix at
// 22.3–22.7 GB/s in quarters against 12.3–12.4 GB/s by adjacent rows (2,048 columns:
// 20.1–20.8 against 18.2–19.1), and a stories110M f16 decode step on two threads took
// 7.2–8.5 ms against 10.6–12.4 (`kvref bench --batches 1`, alternating binaries). On AMD
// Zen 5 (family 26), where the AVX-512 machines had kept the adjacent walk, one thread
// read 1.08–1.43 times as fast in quarters (`BenchmarkMatVecWalk`), and two threads'
// decode steps took 38.9–45.0 against 53.5–56.8 ms (TinyLlama-shape f16) and 9.7–10.2
// against 11.1–11.6 ms (stories110M-shape f32). Zen 4 read at the StreamRead bandwidth by
// adjacent rows with PREFETCHT1; its quarters were measured only before they prefetched
// (0.56 of the bandwidth).

// dotRowsQ4AVX sets out[i+k·q] = Dot(x, w_{i+k·q}) for i < q and k < 4, the rows w_r =
// w[r*stride:r*stride+n] (q > 0, n a positive multiple of 8): dotRowsX4AVX's arithmetic on
// the four quarters of 4q rows side by side, each quarter read as one stream with its row
// two on prefetched into L2. Implemented in matmul_avx_amd64.s.
//
//go:noescape
func dotRowsQ4AVX(out, w, x *float32, q, n, stride int)

// dotRowsX4AVX sets out[r] = Dot(x, w_r) for rows weight rows w_r =
// w[r*stride:r*stride+n] (rows a positive multiple of 4, n a positive multiple of 8), four
// adjacent rows at a time, prefetching the next four into L2. Implemented in
// matmul_avx_amd64.s.
//
//go:noescape
func dotRowsX4AVX(out, w, x *float32, rows, n, stride int)

func matMulRows(out, w, x []float32, rows, cols, batch, start, end int) {
	if matMulRowsFastOK(out, w, x, rows, cols, batch, start, end) {
		switch {
		case batch == 1 && cols%8 == 0 && implMatVecAVX.on:
			matVecAVX(out, w, x, cols, start, end)
			return
		case batch > 1 && cols%8 == 0 && implMatMulAVX.on:
			gemmAVX(out, w, x, rows, cols, batch, start, end, nil, implMatMulAVX512.on)
			return
		case implMatMulAVX.on:
			matMulRowsAVX(out, w, x, rows, cols, batch, start, end, implMatMulAVX512.on)
			return
		}
	}
	matMulRowsGeneric(out, w, x, rows, cols, batch, start, end)
}

func matMulRowsDecoded(out, x []float32, rows, cols, batch, start, end int, decode func(dst []float32, r int)) {
	if batch > 1 && cols%8 == 0 && implMatMulAVX.on && decodedFastOK(out, x, rows, cols, batch, start, end) {
		gemmAVX(out, nil, x, rows, cols, batch, start, end, decode, implMatMulAVX512.on)
		return
	}
	matMulRowsDecodedGeneric(out, x, rows, cols, batch, start, end, decode)
}

// decodedFastOK is matMulRowsFastOK for MatMulRowsDecoded, which reads no weight slice.
func decodedFastOK(out, x []float32, rows, cols, batch, start, end int) bool {
	if cols <= 0 || batch <= 0 || start < 0 || start >= end || end > rows {
		return false
	}
	if batch > len(x)/cols || end > len(out) || batch-1 > (len(out)-end)/rows {
		return false
	}
	return !overlap(out[start:(batch-1)*rows+end], x[:batch*cols])
}

// matMulRowsFastOK reports whether the assembly may run MatMulRows: all indices in range,
// at least one output, and out not overlapping what is read. Everything else (including
// calls that panic) goes to the portable loop, which then defines the behaviour, panics
// included.
func matMulRowsFastOK(out, w, x []float32, rows, cols, batch, start, end int) bool {
	if cols <= 0 || batch <= 0 || start < 0 || start >= end || end > rows {
		return false
	}
	// end*cols <= len(w), batch*cols <= len(x), (batch-1)*rows+end <= len(out), without
	// overflowing.
	if end > len(w)/cols || batch > len(x)/cols || end > len(out) || batch-1 > (len(out)-end)/rows {
		return false
	}
	written := out[start : (batch-1)*rows+end]
	return !overlap(written, w[start*cols:end*cols]) && !overlap(written, x[:batch*cols])
}

// overlap reports whether a and b share any element of memory.
func overlap(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b))*4 && b0 < a0+uintptr(len(a))*4
}
