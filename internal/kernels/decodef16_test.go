package kernels

import (
	"github.com/kvref/kvref/internal/half"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecodeF16Exhaustive widens every one of the 65536 halves, at every position of an
// eight-wide block and in the tail, from unaligned buffers, and compares the bits with the
// portable conversion.
func TestDecodeF16Exhaustive(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implDecodeF16AVX2)
		const n = 1 << 16
		for _, shift := range []int{0, 1, 3, 5} { // rotates which values land in the tail
			src := make([]byte, 2*(n+shift)+1)[1:] // odd address
			for i := 0; i < n+shift; i++ {
				h := uint16((i + shift*7919) % n)
				src[2*i], src[2*i+1] = byte(h), byte(h>>8)
			}
			dst := make([]float32, n+shift+1)[1:]
			DecodeF16(dst, src)
			for i := range dst {
				want := half.F16ToF32(le16(src[2*i:]))
				require.Equal(t, math.Float32bits(want), math.Float32bits(dst[i]), "half %#04x", le16(src[2*i:]))
			}
		}
		for _, m := range []int{0, 1, 7, 8, 9, 31, 33} {
			src := make([]byte, 2*m)
			for i := range src {
				src[i] = byte(i*37 + 11)
			}
			dst := make([]float32, m)
			DecodeF16(dst, src)
			for i := range dst {
				require.Equal(t, math.Float32bits(half.F16ToF32(le16(src[2*i:]))), math.Float32bits(dst[i]), "length %d element %d", m, i)
			}
		}
		require.Panics(t, func() { DecodeF16(make([]float32, 4), make([]byte, 7)) })
	})
}
