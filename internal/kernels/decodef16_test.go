package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/half"
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

// TestDecodeBF16Exhaustive widens every one of the 65536 bfloat16 values and compares the
// bits with the portable conversion; a short source panics.
func TestDecodeBF16Exhaustive(t *testing.T) {
	const n = 1 << 16
	src := make([]byte, 2*n+1)[1:] // odd address
	for i := range n {
		src[2*i], src[2*i+1] = byte(i), byte(i>>8)
	}
	dst := make([]float32, n)
	DecodeBF16(dst, src)
	for i := range dst {
		require.Equal(t, math.Float32bits(half.BF16ToF32(uint16(i))), math.Float32bits(dst[i]), "bfloat16 %#04x", i)
	}
	require.Panics(t, func() { DecodeBF16(make([]float32, 4), make([]byte, 7)) })
}

// TestEncodeF16MatchesGeneric rounds float32 values of every kind to halves at every level,
// at every position of an eight-wide block and in the tail, and compares the bytes with
// half.F32ToF16: the neighbours of every half and the midpoints between them (ties to
// even, the subnormal halves, the overflow to infinity at 65520), NaNs with every payload
// shape, infinities, zeros and random bit patterns.
func TestEncodeF16MatchesGeneric(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implDecodeF16AVX2)
		var src []float32
		for h := range 1 << 15 {
			f := half.F16ToF32(uint16(h))
			b := math.Float32bits(f)
			for _, d := range []int32{-1, 0, 1, 0xfff, 0x1000, 0x1001} {
				v := math.Float32frombits(uint32(int32(b) + d))
				src = append(src, v, -v)
			}
		}
		for _, b := range []uint32{0x7f800001, 0x7fbfffff, 0x7fc00000, 0x7fc00001, 0x7fffe000, 0x7fffffff, 0xff800001, 0xffc00000, 0x7f800000, 0xff800000, 0x477ff000, 0x477fefff, 0x80000000} {
			src = append(src, math.Float32frombits(b))
		}
		rng := rand.New(rand.NewPCG(47, 0))
		for range 1 << 16 {
			src = append(src, math.Float32frombits(rng.Uint32()))
		}
		for _, shift := range []int{0, 3} {
			s := src[shift:]
			dst := make([]byte, 2*len(s)+1)[1:] // odd address
			EncodeF16(dst, s)
			for i, v := range s {
				require.Equal(t, half.F32ToF16(v), le16(dst[2*i:]), "%#08x", math.Float32bits(v))
			}
		}
		require.Panics(t, func() { EncodeF16(make([]byte, 7), make([]float32, 4)) })
	})
}
