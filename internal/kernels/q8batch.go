package kernels

import (
	"fmt"
	"unsafe"
)

// Q8Batch is a batch of input vectors quantized to Q8_0 (Q8Input's blocks, one Q8Input
// per vector), the input of MatMulQ8_0, the batched product of a Q8_0 matrix. Beside the
// vectors it keeps them interleaved four at a time in the layout the batched kernels read
// (packQ8Vector). A Q8Batch is reused across batches: Reset resizes it.
type Q8Batch struct {
	in     []Q8Input
	n      int    // values per vector
	packed []byte // the groups of four vectors, groupBytes(n) each
}

// Reset sizes q for batch vectors of n values (a multiple of 32) each, to be filled by
// Quantize. It panics if n is not a whole number of blocks.
func (q *Q8Batch) Reset(batch, n int) {
	if n%QBlockLen != 0 {
		panic(fmt.Sprintf("kernels: Q8Batch.Reset: vectors of %d values are not a whole number of %d-value blocks", n, QBlockLen))
	}
	if cap(q.in) < batch {
		q.in = append(q.in[:cap(q.in)], make([]Q8Input, batch-cap(q.in))...)
	}
	q.in, q.n = q.in[:batch], n
	q.packed = grow(q.packed, batch/4*q8GroupBytes(n))
}

// Len is the number of vectors.
func (q *Q8Batch) Len() int { return len(q.in) }

// Input returns vector b, quantized.
func (q *Q8Batch) Input(b int) *Q8Input { return &q.in[b] }

// Quantize quantizes x (n values) as vector b. Different vectors may be quantized
// concurrently.
func (q *Q8Batch) Quantize(b int, x []float32) {
	if len(x) != q.n {
		panic(fmt.Sprintf("kernels: Q8Batch.Quantize: a vector of %d values in a batch of %d-value vectors", len(x), q.n))
	}
	q.in[b].Quantize(x)
	if g := b / 4; g < len(q.in)/4 {
		packQ8Vector(q.packed[g*q8GroupBytes(q.n):(g+1)*q8GroupBytes(q.n)], &q.in[b], b%4)
	}
}

// q8GroupBytes is the size of a packed group of four n-value vectors: per pair of blocks
// 768 bytes (the four vectors' 64 values, then their 16 correction terms, then their 16
// block scales), and for an odd last block 384 (the same, 32 bytes each).
func q8GroupBytes(n int) int {
	nb := n / QBlockLen
	return nb/2*768 + nb%2*384
}

// packQ8Vector writes v as vector j (0..3) of its group's packed layout in dst.
func packQ8Vector(dst []byte, v *Q8Input, j int) {
	qs := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v.qs))), len(v.qs))
	corr := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v.corr))), 4*len(v.corr))
	dl := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v.dLanes))), 4*len(v.dLanes))
	nb := v.n / QBlockLen
	for p := 0; p < nb/2; p++ {
		d := dst[p*768:]
		copy(d[64*j:64*j+64], qs[64*p:])
		copy(d[256+64*j:256+64*j+64], corr[64*p:])
		copy(d[512+64*j:512+64*j+64], dl[64*p:])
	}
	if nb%2 == 1 {
		p := nb / 2
		d := dst[p*768:]
		copy(d[32*j:32*j+32], qs[64*p:])
		copy(d[128+32*j:128+32*j+32], corr[64*p:])
		copy(d[256+32*j:256+32*j+32], dl[64*p:])
	}
}

// MatMulQ8_0 sets out[b·rows + r] = DotQ8_0Q8(x.Input(b), w_r) for rows r in [start, end)
// of the Q8_0 matrix w (rows of x's vector length, rows·n/32·34 bytes at least) and every
// vector b of x, bit for bit. On CPUs with AVX-512 VNNI two rows meet four vectors at a
// time (each pair of weight blocks prepared once for the four), the same arithmetic. It
// panics if w or out is too short.
func MatMulQ8_0(out []float32, w []byte, x *Q8Batch, rows, start, end int) {
	rb := x.n / QBlockLen * Q8_0BlockBytes
	w = w[:rowsBytes("MatMulQ8_0", rows, rb)]
	if start < 0 || start > end || end > rows {
		panic(fmt.Sprintf("kernels: MatMulQ8_0: rows [%d, %d) of %d", start, end, rows))
	}
	if len(x.in) > 0 {
		_ = out[(len(x.in)-1)*rows+end-1:]
	}
	matMulQ8_0(out, w, x, rows, rb, start, end)
}

// matMulQ8_0Generic is the portable definition of MatMulQ8_0.
func matMulQ8_0Generic(out []float32, w []byte, x *Q8Batch, rows, rb, start, end int) {
	for r := start; r < end; r++ {
		for b := range x.in {
			out[b*rows+r] = dotQ8_0Q8Generic(&x.in[b], w[r*rb:(r+1)*rb])
		}
	}
}
