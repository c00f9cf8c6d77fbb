package quant

import (
	"encoding/binary"

	"github.com/kvref/kvref/internal/kernels"
)

// The f16 and bf16 cache types store each value as 2 bytes, little-endian, rounded to
// nearest even by F32ToF16 or F32ToBF16 and widened back exactly.

func encodeF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16(v))
	}
}

func decodeF16(dst []float32, src []byte) {
	n := len(dst)
	src = src[:2*n]
	i := 0
	for ; i+8 <= n; i += 8 { // whole groups of 8: one bounds check per group
		ds := dst[i : i+8 : i+8]
		bs := src[2*i : 2*i+16 : 2*i+16]
		for j := range ds {
			ds[j] = f16At(bs, j)
		}
	}
	for ; i < n; i++ {
		dst[i] = f16At(src, i)
	}
}

// f16At returns the i-th half stored in b, widened to float32.
func f16At(b []byte, i int) float32 {
	return f16Table[binary.LittleEndian.Uint16(b[2*i:])]
}

// dotF16 is kernels.Dot(q, decoded head) on the head's bytes b, in the same lane order.
func dotF16(q []float32, b []byte) float32 {
	n := len(q)
	b = b[:2*n]
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qs := q[i : i+8 : i+8]
		bs := b[2*i : 2*i+16 : 2*i+16]
		l0 += float32(qs[0] * f16At(bs, 0))
		l1 += float32(qs[1] * f16At(bs, 1))
		l2 += float32(qs[2] * f16At(bs, 2))
		l3 += float32(qs[3] * f16At(bs, 3))
		l4 += float32(qs[4] * f16At(bs, 4))
		l5 += float32(qs[5] * f16At(bs, 5))
		l6 += float32(qs[6] * f16At(bs, 6))
		l7 += float32(qs[7] * f16At(bs, 7))
	}
	var tail [8]float32
	for j := 0; i+j < n; j++ {
		tail[j] = float32(q[i+j] * f16At(b, i+j))
	}
	return kernels.ReduceLanes(l0+tail[0], l1+tail[1], l2+tail[2], l3+tail[3],
		l4+tail[4], l5+tail[5], l6+tail[6], l7+tail[7])
}

// axpyF16 is kernels.Axpy(dst, a, decoded head) on the head's bytes b.
func axpyF16(dst []float32, a float32, b []byte) {
	n := len(dst)
	b = b[:2*n]
	i := 0
	for ; i+8 <= n; i += 8 { // whole groups of 8: one bounds check per group
		ds := dst[i : i+8 : i+8]
		bs := b[2*i : 2*i+16 : 2*i+16]
		for j := range ds {
			ds[j] += float32(a * f16At(bs, j))
		}
	}
	for ; i < n; i++ {
		dst[i] += float32(a * f16At(b, i))
	}
}

func encodeBF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(v))
	}
}

func decodeBF16(dst []float32, src []byte) {
	n := len(dst)
	src = src[:2*n]
	i := 0
	for ; i+8 <= n; i += 8 { // whole groups of 8: one bounds check per group
		ds := dst[i : i+8 : i+8]
		bs := src[2*i : 2*i+16 : 2*i+16]
		for j := range ds {
			ds[j] = bf16At(bs, j)
		}
	}
	for ; i < n; i++ {
		dst[i] = bf16At(src, i)
	}
}

// bf16At returns the i-th bfloat16 stored in b, widened to float32.
func bf16At(b []byte, i int) float32 {
	return BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
}

// dotBF16 is kernels.Dot(q, decoded head) on the head's bytes b, in the same lane order.
func dotBF16(q []float32, b []byte) float32 {
	n := len(q)
	b = b[:2*n]
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qs := q[i : i+8 : i+8]
		bs := b[2*i : 2*i+16 : 2*i+16]
		l0 += float32(qs[0] * bf16At(bs, 0))
		l1 += float32(qs[1] * bf16At(bs, 1))
		l2 += float32(qs[2] * bf16At(bs, 2))
		l3 += float32(qs[3] * bf16At(bs, 3))
		l4 += float32(qs[4] * bf16At(bs, 4))
		l5 += float32(qs[5] * bf16At(bs, 5))
		l6 += float32(qs[6] * bf16At(bs, 6))
		l7 += float32(qs[7] * bf16At(bs, 7))
	}
	var tail [8]float32
	for j := 0; i+j < n; j++ {
		tail[j] = float32(q[i+j] * bf16At(b, i+j))
	}
	return kernels.ReduceLanes(l0+tail[0], l1+tail[1], l2+tail[2], l3+tail[3],
		l4+tail[4], l5+tail[5], l6+tail[6], l7+tail[7])
}

// axpyBF16 is kernels.Axpy(dst, a, decoded head) on the head's bytes b.
func axpyBF16(dst []float32, a float32, b []byte) {
	n := len(dst)
	b = b[:2*n]
	i := 0
	for ; i+8 <= n; i += 8 { // whole groups of 8: one bounds check per group
		ds := dst[i : i+8 : i+8]
		bs := b[2*i : 2*i+16 : 2*i+16]
		for j := range ds {
			ds[j] += float32(a * bf16At(bs, j))
		}
	}
	for ; i < n; i++ {
		dst[i] += float32(a * bf16At(b, i))
	}
}
