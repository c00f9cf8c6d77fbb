package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSoftmaxRowsEqualsSoftmax: SoftmaxRows over 1 to 9 rows (four at a time and the last
// two or three together) of several lengths and strides, with ties, large and tiny values,
// infinities and zeros of both signs, gives each row Softmax's bits, at every kernel level
// (the exponentials have fast paths); rows that do not fit panic.
func TestSoftmaxRowsEqualsSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	specials := []float32{0, float32(math.Copysign(0, -1)), 88, -104, float32(math.Inf(-1)), 3.5, 3.5}
	forEachLevel(t, func(t *testing.T) {
		use(implExpAVX2)
		for _, n := range []int{1, 2, 7, 33, 300} {
			for _, extra := range []int{0, 5} {
				for rows := 1; rows <= 9; rows++ {
					stride := n + extra
					x := make([]float32, (rows-1)*stride+n)
					for i := range x {
						x[i] = float32(r.NormFloat64() * 6)
						if r.IntN(10) == 0 {
							x[i] = specials[r.IntN(len(specials))]
						}
					}
					want := append([]float32(nil), x...)
					for row := range rows {
						Softmax(want[row*stride : row*stride+n])
					}
					SoftmaxRows(x, rows, n, stride)
					for i := range x {
						require.Equal(t, math.Float32bits(want[i]), math.Float32bits(x[i]), "n %d rows %d stride %d element %d", n, rows, stride, i)
					}
				}
			}
		}
		require.Panics(t, func() { SoftmaxRows(make([]float32, 10), 2, 6, 5) })
		require.Panics(t, func() { SoftmaxRows(make([]float32, 10), 2, 5, 6) })
	})
}
