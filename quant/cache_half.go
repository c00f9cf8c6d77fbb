package quant

import (
	"encoding/binary"

	"github.com/kvref/kvref/internal/half"
	"github.com/kvref/kvref/internal/kernels"
)

// The f16 and bf16 cache types store each value as 2 bytes, little-endian, rounded to
// nearest even by F32ToF16 or F32ToBF16 and widened back exactly.

func encodeF16(dst []byte, src []float32) { encodeHalves(dst, src, half.F32ToF16) }

func encodeBF16(dst []byte, src []float32) { encodeHalves(dst, src, half.F32ToBF16) }

// encodeHalves stores round(v) for every value v of src, 2 bytes little-endian each.
func encodeHalves(dst []byte, src []float32, round func(float32) uint16) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], round(v))
	}
}

// decodeF16 is kernels.DecodeF16, which widens every half exactly (F16C where the CPU has
// it; its test compares all 65536 halves with half.F16ToF32).
func decodeF16(dst []float32, src []byte) { kernels.DecodeF16(dst, src) }

func decodeBF16(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		b := src[2*i : 2*i+2 : 2*i+2]
		dst[i] = half.BF16ToF32(uint16(b[0]) | uint16(b[1])<<8)
	}
}

// dotF16 is kernels.Dot(q, decoded head) on the head's bytes b, in the same lane order:
// kernels.DotF16, the fused row dot that weights use too.
func dotF16(q []float32, b []byte) float32 { return kernels.DotF16(q, b) }

// dotBF16 is kernels.Dot(q, decoded head) on the head's bytes b, in the same lane order:
// kernels.DotBF16.
func dotBF16(q []float32, b []byte) float32 { return kernels.DotBF16(q, b) }

// axpyF16 is kernels.Axpy(dst, a, decoded head) on the head's bytes b.
func axpyF16(dst []float32, a float32, b []byte) { axpyHalves(dst, a, b, false) }

// axpyBF16 is kernels.Axpy(dst, a, decoded head) on the head's bytes b.
func axpyBF16(dst []float32, a float32, b []byte) { axpyHalves(dst, a, b, true) }

// axpyHalves is kernels.Axpy(dst, a, decoded head) for a head of f16 (or, with bf16,
// bfloat16) values b: Axpy works value by value, so decoding and adding a chunk at a time
// gives the same bits as decoding the whole head first, without a head-sized buffer.
func axpyHalves(dst []float32, a float32, b []byte, bf16 bool) {
	var buf [64]float32
	for i := 0; i < len(dst); i += len(buf) {
		d := dst[i:min(i+len(buf), len(dst))]
		x, src := buf[:len(d)], b[2*i:2*(i+len(d))]
		if bf16 {
			decodeBF16(x, src)
		} else {
			decodeF16(x, src)
		}
		kernels.Axpy(d, a, x)
	}
}
