package model_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/gguf"
	"github.com/kvref/kvref/quant"
)

// TestQuantizedMatrixIsBatchInvariant: for every ggml block format, the fused batch-1 path
// and the decode-then-dot batch path give the same bits as kernels.Dot on Row().
func TestQuantizedMatrixIsBatchInvariant(t *testing.T) {
	const rows, cols = 7, 512
	r := rng.New(5)
	src := make([]float32, cols)
	x := make([]float32, 3*cols)
	for i := range x {
		x[i] = r.Symmetric()
	}
	threads := parallel.NewPool(2)
	defer threads.Close()
	for _, wt := range quant.WeightTypes() {
		rb, err := wt.RowBytes(cols)
		require.NoError(t, err)
		data := make([]byte, rows*rb)
		for row := 0; row < rows; row++ {
			for i := range src {
				src[i] = 2 * r.Symmetric()
			}
			wt.QuantizeRow(data[row*rb:(row+1)*rb], src)
		}
		m, err := model.NewMatrix("w", rows, cols, gguf.TensorType(wt.GGMLType()), data)
		require.NoError(t, err)
		one := make([]float32, rows)
		three := make([]float32, 3*rows)
		m.MulBatch(threads, one, x[:cols], 1)
		m.MulBatch(threads, three, x, 3)
		for row := 0; row < rows; row++ {
			want := kernels.Dot(x[:cols], m.Row(row, make([]float32, cols)))
			require.Equal(t, math.Float32bits(want), math.Float32bits(one[row]), "%s row %d batch 1", wt, row)
			require.Equal(t, math.Float32bits(want), math.Float32bits(three[row]), "%s row %d batch 3", wt, row)
		}
	}
}
