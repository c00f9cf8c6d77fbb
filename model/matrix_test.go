package model_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// TestQuantizedMatrixIsBatchInvariant: for every ggml block format, the fused batch-1 path
// and the batch path give the same bits as the type's DotRow on the stored row (the input
// quantized, as in ggml).
func TestQuantizedMatrixIsBatchInvariant(t *testing.T) {
	t.Parallel()

	// 7 rows: one panel of decoded rows; 300 rows of 512: several panels per thread.
	for _, rows := range []int{7, 300} {
		checkQuantizedBatchInvariant(t, rows, 512, 9)
	}
}

func checkQuantizedBatchInvariant(t *testing.T, rows, cols, batch int) {
	r := rng.New(5)
	src := make([]float32, cols)
	x := make([]float32, batch*cols)
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
		all := make([]float32, batch*rows)
		m.MulBatch(threads, one, x[:cols], 1)
		m.MulBatch(threads, all, x, batch)
		for row := 0; row < rows; row++ {
			want := rowProduct(m, x[:cols], row)
			require.Equal(t, math.Float32bits(want), math.Float32bits(one[row]), "%s row %d batch 1", wt, row)
			for b := range batch {
				want := rowProduct(m, x[b*cols:(b+1)*cols], row)
				require.Equal(t, math.Float32bits(want), math.Float32bits(all[b*rows+row]), "%s row %d, vector %d of %d", wt, row, b, batch)
			}
		}
	}
}

// rowProduct is what MulBatch must give for row r of m and the input x: kernels.Dot of the
// decoded row, or for a quantized matrix the type's product with the input quantized.
func rowProduct(m *model.Matrix, x []float32, r int) float32 {
	if wt, ok := quant.WeightTypeForGGML(uint32(m.Type)); ok {
		return wt.DotRow(x, m.RawRow(r))
	}
	return kernels.Dot(x, m.Row(r, make([]float32, m.Cols)))
}
