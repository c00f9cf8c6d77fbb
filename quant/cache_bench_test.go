package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/kvref/kvref/internal/half"
	"github.com/kvref/kvref/internal/kernels"
)

// benchShape is a Llama-like K/V row: 8 KV heads of 128.
var benchShape = shape{8, 128}

// sink keeps benchmark results alive.
var sink float32

func benchRow(ct CacheType) ([]byte, []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := normalRow(rng, benchShape.kvHeads*benchShape.headDim)
	row := make([]byte, ct.RowBytes(benchShape.kvHeads, benchShape.headDim))
	ct.Encode(row, x, benchShape.kvHeads, benchShape.headDim)
	return row, normalRow(rng, benchShape.headDim)
}

// BenchmarkDotHead measures one head (headDim 128) of a stored row dotted with a query.
// The "kernels.Dot" case is the plain float32 dot product on an already decoded head,
// for comparison. Bytes are the stored bytes of one head.
func BenchmarkDotHead(b *testing.B) {
	b.Run("kernels.Dot", func(b *testing.B) {
		_, q := benchRow(F32)
		k := normalRow(rand.New(rand.NewPCG(3, 4)), benchShape.headDim)
		b.SetBytes(int64(4 * benchShape.headDim))
		for b.Loop() {
			sink += kernels.Dot(q, k)
		}
	})
	for _, ct := range CacheTypes() {
		b.Run(ct.String(), func(b *testing.B) {
			row, q := benchRow(ct)
			b.SetBytes(int64(len(row) / benchShape.kvHeads))
			for b.Loop() {
				sink += ct.DotHead(q, row, 3, benchShape.kvHeads, benchShape.headDim)
			}
		})
	}
}

// BenchmarkAxpyHead measures adding a·(one stored head, headDim 128) to a vector.
func BenchmarkAxpyHead(b *testing.B) {
	for _, ct := range CacheTypes() {
		b.Run(ct.String(), func(b *testing.B) {
			row, dst := benchRow(ct)
			b.SetBytes(int64(len(row) / benchShape.kvHeads))
			for b.Loop() {
				ct.AxpyHead(dst, 1e-3, row, 3, benchShape.kvHeads, benchShape.headDim)
			}
		})
	}
}

// BenchmarkEncode measures quantizing one whole row (8 heads of 128).
func BenchmarkEncode(b *testing.B) {
	for _, ct := range CacheTypes() {
		b.Run(ct.String(), func(b *testing.B) {
			row, _ := benchRow(ct)
			x := normalRow(rand.New(rand.NewPCG(5, 6)), benchShape.kvHeads*benchShape.headDim)
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				ct.Encode(row, x, benchShape.kvHeads, benchShape.headDim)
			}
		})
	}
}

// BenchmarkDecode measures dequantizing one whole row (8 heads of 128).
func BenchmarkDecode(b *testing.B) {
	for _, ct := range CacheTypes() {
		b.Run(ct.String(), func(b *testing.B) {
			row, _ := benchRow(ct)
			x := make([]float32, benchShape.kvHeads*benchShape.headDim)
			b.SetBytes(int64(len(row)))
			for b.Loop() {
				ct.Decode(x, row, benchShape.kvHeads, benchShape.headDim)
			}
		})
	}
}

// BenchmarkF16ToF32 compares the bit-field conversion with the table the kernels use.
func BenchmarkF16ToF32(b *testing.B) {
	hs := make([]uint16, 4096)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range hs {
		hs[i] = half.F32ToF16(float32(rng.NormFloat64()))
	}
	out := make([]float32, len(hs))
	b.Run("bits", func(b *testing.B) {
		for b.Loop() {
			for i, h := range hs {
				out[i] = half.F16ToF32(h)
			}
		}
	})
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			for i, h := range hs {
				out[i] = half.F16Table[h]
			}
		}
	})
}
