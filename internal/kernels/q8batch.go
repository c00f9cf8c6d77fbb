package kernels

import (
	"fmt"
	"unsafe"
)

// Q8Batch is a batch of input vectors quantized to Q8_0 (one Q8Input each, all of one
// length), the input of DotQ8_0Batch, the batched product of a Q8_0 matrix: beside the
// vectors it keeps them interleaved four at a time in the layout the batched kernels read
// (packQ8Vector). A Q8Batch is reused across batches: Set refills it.
type Q8Batch struct {
	in     []*Q8Input
	n      int       // values per vector
	packed []byte    // the groups of four vectors, q8GroupBytes(n) each
	scales []float32 // each group's block scales side by side: vector j's d of block b at 4b+j, n/8 floats a group
}

// Set makes q the batch of the quantized vectors in (it keeps the pointers, not copies of
// the vectors: they must not change while q is in use). It panics unless they all have one
// length.
func (q *Q8Batch) Set(in []*Q8Input) {
	q.in, q.n = append(q.in[:0], in...), 0
	if len(in) > 0 {
		q.n = in[0].n
	}
	gb, nb := q8GroupBytes(q.n), q.n/QBlockLen
	q.packed = grow(q.packed, len(in)/4*gb)
	q.scales = grow(q.scales, len(in)/4*4*nb)
	for b := range in {
		if in[b].n != q.n {
			panic(fmt.Sprintf("kernels: Q8Batch.Set: vector %d has %d values, vector 0 %d", b, in[b].n, q.n))
		}
		if g := b / 4; g < len(in)/4 {
			packQ8Vector(q.packed[g*gb:(g+1)*gb], in[b], b%4)
			scales := q.scales[g*4*nb : (g+1)*4*nb]
			for k, d := range in[b].d {
				scales[4*k+b%4] = d
			}
		}
	}
}

// Len is the number of vectors.
func (q *Q8Batch) Len() int { return len(q.in) }

// Input returns vector b.
func (q *Q8Batch) Input(b int) *Q8Input { return q.in[b] }

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

// DotQ8_0Batch sets out[v·stride + r] = DotQ8_0Q8(x.Input(v), w_r) for the rows Q8_0 rows
// in w (rows of x's vector length, n/32·34 bytes each) and every vector v of x, bit for
// bit: DotQ8_0Q8Rows of each vector, as the k types' batched products (DotQ4_KBatch, ...)
// are theirs. On CPUs with AVX-512 VNNI two rows meet four vectors at a time (each pair of
// weight blocks prepared once for the four), with AVX2 one row four vectors; the same
// arithmetic. It panics if w or out is too short.
func DotQ8_0Batch(out []float32, stride int, x *Q8Batch, w []byte, rows int) {
	rb := x.n / QBlockLen * Q8_0BlockBytes
	w = w[:rowsBytes("DotQ8_0Batch", rows, rb)]
	c := len(x.in)
	if c == 0 || rows == 0 {
		return
	}
	checkBatchOut("DotQ8_0Batch", out, stride, c, rows)
	matMulQ8_0(out, w, x, stride, rb, 0, rows)
}
