package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/half"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/quant"
)

// TestMulSharedIsMulBatch: several matrices of different storage types multiplied by one
// shared input in one pass give each matrix's own MulBatch, bit for bit, at batch 1 and in
// a batch, however the pieces of rows straddle the matrices.
func TestMulSharedIsMulBatch(t *testing.T) {
	t.Parallel()

	const cols = 256
	r := rng.New(12)
	threads := parallel.NewPool(2)
	defer threads.Close()
	src := make([]float32, cols)
	newMatrix := func(typ string, rows int) *Matrix {
		switch typ {
		case "f32":
			data := make([]float32, rows*cols)
			for i := range data {
				data[i] = r.Symmetric()
			}
			m, err := NewMatrixF32(typ, rows, cols, data)
			require.NoError(t, err)
			return m
		case "f16":
			data := make([]byte, 2*rows*cols)
			for i := 0; i < rows*cols; i++ {
				h := half.F32ToF16(r.Symmetric())
				data[2*i], data[2*i+1] = byte(h), byte(h>>8)
			}
			m, err := NewMatrix(typ, rows, cols, gguf.F16, data)
			require.NoError(t, err)
			return m
		}
		wt, err := quant.ParseWeightType(typ)
		require.NoError(t, err)
		rb, err := wt.RowBytes(cols)
		require.NoError(t, err)
		data := make([]byte, rows*rb)
		for row := range rows {
			for i := range src {
				src[i] = r.Symmetric()
			}
			wt.QuantizeRow(data[row*rb:(row+1)*rb], src)
		}
		m, err := NewMatrix(typ, rows, cols, gguf.TensorType(wt.GGMLType()), data)
		require.NoError(t, err)
		return m
	}
	for _, types := range [][]string{{"q8_0", "q8_0", "q8_0"}, {"q8_0", "f32", "q4_k"}, {"f16", "q8_0"}, {"f32", "f32"}} {
		for _, batch := range []int{1, 5} {
			x := make([]float32, batch*cols)
			for i := range x {
				x[i] = r.Symmetric()
			}
			var ms []*Matrix
			var outs [][]float32
			for i, typ := range types {
				rows := []int{200, 37, 64}[i%3]
				ms = append(ms, newMatrix(typ, rows))
				outs = append(outs, make([]float32, batch*rows))
			}
			mulShared(threads, x, batch, ms, outs)
			for i, m := range ms {
				want := make([]float32, batch*m.Rows)
				m.MulBatch(threads, want, x, batch)
				for j := range want {
					require.Equal(t, math.Float32bits(want[j]), math.Float32bits(outs[i][j]), "%v batch %d: matrix %d (%s) output %d", types, batch, i, types[i], j)
				}
			}
		}
	}
}
