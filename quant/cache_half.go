package quant

import (
	"encoding/binary"
	"github.com/kvref/kvref/internal/half"

	"github.com/kvref/kvref/internal/kernels"
)

// The f16 and bf16 cache types store each value as 2 bytes, little-endian, rounded to
// nearest even by F32ToF16 or F32ToBF16 and widened back exactly.

func encodeF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], half.F32ToF16(v))
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
	return half.F16Table[binary.LittleEndian.Uint16(b[2*i:])]
}

// dotF16 is kernels.Dot(q, decoded head) on the head's bytes b, in the same lane order:
// kernels.DotF16, the fused row dot that weights use too.
func dotF16(q []float32, b []byte) float32 {
	return kernels.DotF16(q, b)
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
		binary.LittleEndian.PutUint16(dst[2*i:], half.F32ToBF16(v))
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
	return half.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
}

// dotBF16 is kernels.Dot(q, decoded head) on the head's bytes b, in the same lane order:
// kernels.DotBF16.
func dotBF16(q []float32, b []byte) float32 {
	return kernels.DotBF16(q, b)
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
