package model_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/half"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// TestHalfMatrixIsBatchInvariant: for F16 and BF16 matrices (and the block formats, with
// enough rows that the threads get blocks of four rows and leftovers), the fused batch-1
// path (kernels.DotF16Rows, kernels.DotBF16Rows) and the decode-then-dot batch path give
// the same bits as kernels.Dot on Row(), and the block formats' paths the bits of their
// DotRow.
func TestHalfMatrixIsBatchInvariant(t *testing.T) {
	t.Parallel()

	const rows = 37
	r := rng.New(6)
	threads := parallel.NewPool(2)
	defer threads.Close()
	type format struct {
		typ  gguf.TensorType
		cols []int
		fill func(data []byte, rows, cols int)
	}
	halves := func(conv func(float32) uint16) func(data []byte, rows, cols int) {
		return func(data []byte, rows, cols int) {
			for i := 0; i < rows*cols; i++ {
				binary.LittleEndian.PutUint16(data[2*i:], conv(2*r.Symmetric()))
			}
		}
	}
	formats := []format{
		{gguf.F16, []int{1, 8, 100, 512}, halves(half.F32ToF16)},
		{gguf.BF16, []int{1, 8, 100, 512}, halves(half.F32ToBF16)},
	}
	for _, wt := range quant.WeightTypes() {
		formats = append(formats, format{gguf.TensorType(wt.GGMLType()), []int{wt.BlockSize(), 512}, func(data []byte, rows, cols int) {
			rb, _ := wt.RowBytes(cols)
			src := make([]float32, cols)
			for row := 0; row < rows; row++ {
				for i := range src {
					src[i] = 2 * r.Symmetric()
				}
				wt.QuantizeRow(data[row*rb:(row+1)*rb], src)
			}
		}})
	}
	for _, f := range formats {
		for _, cols := range f.cols {
			x := make([]float32, 3*cols)
			for i := range x {
				x[i] = r.Symmetric()
			}
			size := 2 * cols
			if wt, ok := quant.WeightTypeForGGML(uint32(f.typ)); ok {
				size, _ = wt.RowBytes(cols)
			}
			data := make([]byte, rows*size)
			f.fill(data, rows, cols)
			m, err := model.NewMatrix("w", rows, cols, f.typ, data)
			require.NoError(t, err)
			one := make([]float32, rows)
			three := make([]float32, 3*rows)
			m.MulBatch(threads, one, x[:cols], 1)
			m.MulBatch(threads, three, x, 3)
			for row := 0; row < rows; row++ {
				what := fmt.Sprintf("%s cols=%d row %d", f.typ, cols, row)
				want := rowProduct(m, x[:cols], row)
				require.Equal(t, math.Float32bits(want), math.Float32bits(one[row]), "%s batch 1", what)
				for b := range 3 {
					want := rowProduct(m, x[b*cols:(b+1)*cols], row)
					require.Equal(t, math.Float32bits(want), math.Float32bits(three[b*rows+row]), "%s batch 3, vector %d", what, b)
				}
			}
		}
	}
}
