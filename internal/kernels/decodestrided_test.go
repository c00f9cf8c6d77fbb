package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecodeF16Strided: rows of halves at every stride and row length (with and without a
// tail of fewer than eight, from an odd address) widen to what DecodeF16 gives each row,
// bit for bit, at every kernel level, with or without next rows to ask for; short sources
// and bad shapes panic.
func TestDecodeF16Strided(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implDecodeF16AVX2)
		for _, n := range []int{1, 7, 8, 16, 64, 67, 128} {
			for _, extra := range []int{0, 2, 6, 130} {
				stride := 2*n + extra
				for _, rows := range []int{1, 2, 5, 16} {
					src := make([]byte, rows*stride+1)[1:] // odd address
					for i := range src {
						src[i] = byte(i*131 + 7 + i>>8)
					}
					src = src[:(rows-1)*stride+2*n]
					got := make([]float32, rows*n)
					// The next rows to ask for (a hint): none, other bytes, or fewer rows.
					next := [][]byte{nil, make([]byte, len(src)), make([]byte, len(src)/2+1)}[rows%3]
					DecodeF16Strided(got, src, n, stride, next)
					want := make([]float32, n)
					for r := range rows {
						decodeF16Generic(want, src[r*stride:])
						for i := range n {
							require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[r*n+i]), "n %d stride %d row %d element %d", n, stride, r, i)
						}
					}
				}
			}
		}
		DecodeF16Strided(nil, nil, 8, 16, nil) // no rows
		require.Panics(t, func() { DecodeF16Strided(make([]float32, 16), make([]byte, 47), 8, 32, nil) })
		require.Panics(t, func() { DecodeF16Strided(make([]float32, 16), make([]byte, 64), 8, 15, nil) })
		require.Panics(t, func() { DecodeF16Strided(make([]float32, 15), make([]byte, 64), 8, 16, nil) })
		require.Panics(t, func() { DecodeF16Strided(make([]float32, 15), make([]byte, 64), 0, 16, nil) })
	})
}
