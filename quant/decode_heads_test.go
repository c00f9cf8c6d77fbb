package quant

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/rng"
)

// TestDecodeHeadsEqualsDecode: DecodeHeads of a block's rows is Decode of each row, cut to the head.
func TestDecodeHeadsEqualsDecode(t *testing.T) {
	r := rng.New(3)
	for _, ct := range CacheTypes() {
		const kvHeads, headDim, n = 3, 64, 5
		rb := ct.RowBytes(kvHeads, headDim)
		rows := make([]byte, n*rb)
		x := make([]float32, kvHeads*headDim)
		for i := range n {
			for j := range x {
				x[j] = 3 * r.Symmetric()
			}
			ct.Encode(rows[i*rb:(i+1)*rb], x, kvHeads, headDim)
		}
		for head := range kvHeads {
			got := make([]float32, n*headDim)
			ct.DecodeHeads(got, rows, head, kvHeads, headDim)
			for i := range n {
				ct.Decode(x, rows[i*rb:(i+1)*rb], kvHeads, headDim)
				for j := range headDim {
					require.Equal(t, math.Float32bits(x[head*headDim+j]), math.Float32bits(got[i*headDim+j]), "%s head %d row %d", ct, head, i)
				}
			}
		}
		require.Panics(t, func() { ct.DecodeHeads(make([]float32, (n+1)*headDim), rows, 0, kvHeads, headDim) })
		require.Panics(t, func() { ct.DecodeHeads(make([]float32, headDim+1), rows, 0, kvHeads, headDim) })
		require.Panics(t, func() { ct.DecodeHeads(make([]float32, headDim), rows, kvHeads, kvHeads, headDim) })
	}
}
