package quant

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/rng"
)

// TestDecodeHeadsEqualsDecode: DecodeHeads of a block's rows is Decode of each row, cut to
// the head, with or without next rows to ask for.
func TestDecodeHeadsEqualsDecode(t *testing.T) {
	t.Parallel()

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
		// The next rows to ask for (a hint): none, other rows as many, or fewer.
		other := make([]byte, len(rows))
		for head := range kvHeads {
			got := make([]float32, n*headDim)
			ct.DecodeHeads(got, rows, head, kvHeads, headDim, [][]byte{nil, other, other[:rb]}[head%3])
			for i := range n {
				ct.Decode(x, rows[i*rb:(i+1)*rb], kvHeads, headDim)
				for j := range headDim {
					require.Equal(t, math.Float32bits(x[head*headDim+j]), math.Float32bits(got[i*headDim+j]), "%s head %d row %d", ct, head, i)
				}
			}
		}
		require.Panics(t, func() { ct.DecodeHeads(make([]float32, (n+1)*headDim), rows, 0, kvHeads, headDim, nil) })
		require.Panics(t, func() { ct.DecodeHeads(make([]float32, headDim+1), rows, 0, kvHeads, headDim, nil) })
		require.Panics(t, func() { ct.DecodeHeads(make([]float32, headDim), rows, kvHeads, kvHeads, headDim, nil) })
	}
}

// TestF32HeadsViewsRows: an f32 cache's head of consecutive rows is viewed in place, row i
// at i·stride, the values Decode gives; other types, short rows and bad heads are refused.
func TestF32HeadsViewsRows(t *testing.T) {
	t.Parallel()

	const kvHeads, headDim, n = 3, 8, 4
	rb := F32.RowBytes(kvHeads, headDim)
	rows := make([]byte, n*rb)
	x := make([]float32, kvHeads*headDim)
	for i := range n {
		for j := range x {
			x[j] = float32(i*100 + j)
		}
		F32.Encode(rows[i*rb:(i+1)*rb], x, kvHeads, headDim)
	}
	v, stride, ok := F32.F32Heads(rows, n, 2, kvHeads, headDim)
	require.True(t, ok)
	require.Equal(t, kvHeads*headDim, stride)
	for i := range n {
		for j := range headDim {
			require.Equal(t, float32(i*100+2*headDim+j), v[i*stride+j], "row %d value %d", i, j)
		}
	}
	binary.LittleEndian.PutUint32(rows[rb+4*2*headDim:], math.Float32bits(7.5)) // a view, not a copy
	require.Equal(t, float32(7.5), v[stride])
	_, _, ok = F16.F32Heads(make([]byte, n*F16.RowBytes(kvHeads, headDim)), n, 0, kvHeads, headDim)
	require.False(t, ok)
	_, _, ok = F32.F32Heads(rows[:n*rb-1], n, 0, kvHeads, headDim)
	require.False(t, ok)
	_, _, ok = F32.F32Heads(rows, n, kvHeads, kvHeads, headDim)
	require.False(t, ok)
}
