package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/kernels"
)

// weightBenchLen is the length of the benchmark rows: a Llama-7B-sized model dimension.
const weightBenchLen = 4096

// weightSink keeps benchmark results alive.
var weightSink float32

// weightBenchRow returns a quantized weight row and an input vector of weightBenchLen
// values.
func weightBenchRow(b *testing.B, wt WeightType) ([]byte, []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	row, _ := quantizeWeights(b, wt, weightTestRow(rng, "normal", weightBenchLen, 0.02))
	return row, weightTestRow(rng, "normal", weightBenchLen, 1)
}

// BenchmarkDotRow measures one 4096-long weight row dotted with an input vector, the
// inner step of a quantized matrix–vector product. "f32" is kernels.Dot on a row that is
// already float32, for comparison. Bytes are the stored row's.
func BenchmarkDotRow(b *testing.B) {
	b.Run("f32", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		w := weightTestRow(rng, "normal", weightBenchLen, 0.02)
		x := weightTestRow(rng, "normal", weightBenchLen, 1)
		b.SetBytes(4 * weightBenchLen)
		for b.Loop() {
			weightSink += kernels.Dot(x, w)
		}
	})
	for _, wt := range WeightTypes() {
		b.Run(wt.String(), func(b *testing.B) {
			row, x := weightBenchRow(b, wt)
			b.SetBytes(int64(len(row)))
			for b.Loop() {
				weightSink += wt.DotRow(x, row)
			}
		})
	}
}

// BenchmarkDequantizeRow measures decoding one 4096-long row to float32.
func BenchmarkDequantizeRow(b *testing.B) {
	for _, wt := range WeightTypes() {
		b.Run(wt.String(), func(b *testing.B) {
			row, _ := weightBenchRow(b, wt)
			y := make([]float32, weightBenchLen)
			b.SetBytes(int64(len(row)))
			for b.Loop() {
				wt.DequantizeRow(y, row)
			}
		})
	}
}

// BenchmarkQuantizeRow measures ggml's reference quantizer on one 4096-long row (the
// k-quants' scale search dominates theirs).
func BenchmarkQuantizeRow(b *testing.B) {
	for _, wt := range WeightTypes() {
		b.Run(wt.String(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			x := weightTestRow(rng, "normal", weightBenchLen, 0.02)
			rb, err := wt.RowBytes(len(x))
			require.NoError(b, err)
			row := make([]byte, rb)
			b.SetBytes(4 * weightBenchLen)
			for b.Loop() {
				wt.QuantizeRow(row, x)
			}
		})
	}
}
