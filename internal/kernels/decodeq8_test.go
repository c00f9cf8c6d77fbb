package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/half"
)

// TestDecodeQ8_0Strided: rows of Q8_0 blocks at several strides, from an odd address, with
// scales that cover normal, subnormal, zero, negative, infinite and NaN halves and every
// int8 value, decode to float32(q)·d of each value, bit for bit, at every kernel level,
// with or without next rows to ask for; short sources and bad shapes panic.
func TestDecodeQ8_0Strided(t *testing.T) {
	scales := []uint16{0x3c00, 0x0001, 0x03ff, 0x0000, 0x8000, 0xbc00, 0x7bff, 0x7c00, 0xfc00, 0x7e01, 0x2e66, 0x5640}
	forEachLevel(t, func(t *testing.T) {
		use(implDecodeQ8_0AVX2)
		k := 0
		for _, nb := range []int{1, 2, 3} {
			for _, extra := range []int{0, 1, 34, 100} {
				stride := Q8_0BlockBytes*nb + extra
				for _, rows := range []int{1, 2, 7} {
					src := make([]byte, rows*stride+1)[1:] // odd address
					for r := range rows {
						for b := range nb {
							blk := src[r*stride+b*Q8_0BlockBytes:]
							d := scales[k%len(scales)]
							k++
							blk[0], blk[1] = byte(d), byte(d>>8)
							for j := range QBlockLen {
								blk[2+j] = byte(k*37 + j*101)
							}
						}
					}
					src = src[:(rows-1)*stride+Q8_0BlockBytes*nb]
					got := make([]float32, rows*nb*QBlockLen)
					// The next rows to ask for (a hint): none, other bytes, or fewer rows.
					next := [][]byte{nil, make([]byte, len(src)), make([]byte, len(src)/2+1)}[(rows+extra)%3]
					DecodeQ8_0Strided(got, src, nb, stride, next)
					for r := range rows {
						for b := range nb {
							blk := src[r*stride+b*Q8_0BlockBytes:]
							d := half.F16ToF32(le16(blk))
							for j := range QBlockLen {
								want := float32(int8(blk[2+j])) * d
								g := got[(r*nb+b)*QBlockLen+j]
								if math.IsNaN(float64(want)) {
									require.True(t, math.IsNaN(float64(g)), "nb %d row %d block %d value %d", nb, r, b, j)
									continue
								}
								require.Equal(t, math.Float32bits(want), math.Float32bits(g), "nb %d row %d block %d value %d", nb, r, b, j)
							}
						}
					}
				}
			}
		}
		DecodeQ8_0Strided(nil, nil, 1, 34, nil) // no rows
		require.Panics(t, func() { DecodeQ8_0Strided(make([]float32, 64), make([]byte, 34+33), 1, 34, nil) })
		require.Panics(t, func() { DecodeQ8_0Strided(make([]float32, 64), make([]byte, 100), 1, 33, nil) })
		require.Panics(t, func() { DecodeQ8_0Strided(make([]float32, 48), make([]byte, 100), 1, 34, nil) })
		require.Panics(t, func() { DecodeQ8_0Strided(make([]float32, 64), make([]byte, 100), 0, 34, nil) })
	})
}
