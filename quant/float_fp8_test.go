package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/half"
)

// fp8Spec is an FP8 format as the OFP8 specification describes it, for the independent
// reference computations in this file.
type fp8Spec struct {
	name     string
	expBits  int
	mantBits int
	bias     int
	fn       bool // E4M3 "FN": no infinities, only S.1111.111 is NaN
	maxCode  uint8
	max      float64
	decode   func(uint8) float32
	encode   func(float32) uint8
}

var fp8Specs = []fp8Spec{
	{"e4m3", 4, 3, 7, true, 0x7e, 448, FP8E4M3ToF32, F32ToFP8E4M3},
	{"e5m2", 5, 2, 15, false, 0x7b, 57344, FP8E5M2ToF32, F32ToFP8E5M2},
}

// value computes code b's value from its bit fields with math.Ldexp.
func (s fp8Spec) value(b uint8) float64 {
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	e := int(b>>s.mantBits) & (1<<s.expBits - 1)
	m := int(b) & (1<<s.mantBits - 1)
	top := 1<<s.expBits - 1
	switch {
	case s.fn && e == top && m == 1<<s.mantBits-1:
		return math.NaN()
	case !s.fn && e == top && m == 0:
		return sign * math.Inf(1)
	case !s.fn && e == top:
		return math.NaN()
	case e == 0:
		return sign * math.Ldexp(float64(m), 1-s.bias-s.mantBits)
	default:
		return sign * math.Ldexp(float64(1<<s.mantBits+m), e-s.bias-s.mantBits)
	}
}

func (s fp8Spec) isNaN(b uint8) bool { return math.IsNaN(s.value(b)) }

// nearest is a brute-force reference encoder: the finite code nearest to x, ties to the
// even code, saturating beyond the largest finite value; NaN gives 0x7F with x's sign.
func (s fp8Spec) nearest(x float32) uint8 {
	sign := uint8(0)
	if math.Signbit(float64(x)) {
		sign = 0x80
	}
	if math.IsNaN(float64(x)) {
		return sign | 0x7f
	}
	a := math.Abs(float64(x))
	if a >= s.max { // saturation (and float64 distances would tie far out)
		return sign | s.maxCode
	}
	best, bestD := uint8(0), math.Inf(1)
	for c := uint8(0); c <= s.maxCode; c++ {
		d := math.Abs(s.value(c) - a)
		if d < bestD || (d == bestD && c&1 == 0) {
			best, bestD = c, d
		}
	}
	return sign | best
}

func TestFP8DecodeMatchesBitFields(t *testing.T) {
	t.Parallel()

	for _, s := range fp8Specs {
		t.Run(s.name, func(t *testing.T) {
			for b := range 256 {
				got, want := s.decode(uint8(b)), s.value(uint8(b))
				if math.IsNaN(want) {
					require.Truef(t, math.IsNaN(float64(got)), "code %#02x", b)
					require.Equalf(t, b&0x80 != 0, math.Signbit(float64(got)), "NaN sign of code %#02x", b)
					continue
				}
				require.Equalf(t, want, float64(got), "code %#02x", b)
				require.Equalf(t, math.Signbit(want), math.Signbit(float64(got)), "sign of code %#02x", b)
			}
		})
	}
}

func TestFP8KnownValues(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		name string
		got  float32
		want float64
	}{
		{"e4m3 max", FP8E4M3ToF32(0x7e), 448},
		{"e4m3 -max", FP8E4M3ToF32(0xfe), -448},
		{"e4m3 one", FP8E4M3ToF32(0x38), 1},
		{"e4m3 min normal", FP8E4M3ToF32(0x08), 0x1p-6},
		{"e4m3 min subnormal", FP8E4M3ToF32(0x01), 0x1p-9},
		{"e4m3 max subnormal", FP8E4M3ToF32(0x07), 0.875 * 0x1p-6},
		{"e5m2 max", FP8E5M2ToF32(0x7b), 57344},
		{"e5m2 one", FP8E5M2ToF32(0x3c), 1},
		{"e5m2 min normal", FP8E5M2ToF32(0x04), 0x1p-14},
		{"e5m2 min subnormal", FP8E5M2ToF32(0x01), 0x1p-16},
		{"e5m2 inf", FP8E5M2ToF32(0x7c), math.Inf(1)},
		{"e5m2 -inf", FP8E5M2ToF32(0xfc), math.Inf(-1)},
	} {
		require.Equal(t, c.want, float64(c.got), c.name)
	}
	for _, b := range []uint8{0x7f, 0xff} {
		require.True(t, math.IsNaN(float64(FP8E4M3ToF32(b))))
	}
	for _, b := range []uint8{0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff} {
		require.True(t, math.IsNaN(float64(FP8E5M2ToF32(b))))
	}
	// E5M2 is the top byte of an IEEE half.
	for b := range 256 {
		want := half.F16ToF32(uint16(b) << 8)
		got := FP8E5M2ToF32(uint8(b))
		if !math.IsNaN(float64(want)) {
			require.Equal(t, math.Float32bits(want), math.Float32bits(got))
		}
	}
}

func TestFP8EncodeDecodeIdentity(t *testing.T) {
	t.Parallel()

	for _, s := range fp8Specs {
		t.Run(s.name, func(t *testing.T) {
			for b := range 256 {
				c := uint8(b)
				if s.isNaN(c) {
					got := s.encode(s.decode(c))
					require.Equalf(t, c&0x80|0x7f, got, "NaN code %#02x encodes to the NaN 0x7F with its sign", c)
					continue
				}
				if !s.fn && c&0x7f == 0x7c { // ±Inf saturates to ±57344
					require.Equalf(t, c&0x80|0x7b, s.encode(s.decode(c)), "Inf code %#02x", c)
					continue
				}
				require.Equalf(t, c, s.encode(s.decode(c)), "code %#02x (value %v)", c, s.decode(c)) // ±0 included
			}
		})
	}
}

// TestFP8Ties checks the midpoint between every two neighbouring finite codes (and its
// float32 neighbours): the tie goes to the even code.
func TestFP8Ties(t *testing.T) {
	t.Parallel()

	for _, s := range fp8Specs {
		t.Run(s.name, func(t *testing.T) {
			for c := uint8(0); c < s.maxCode; c++ {
				mid := float32((s.value(c) + s.value(c+1)) / 2) // exact in float32
				require.Equal(t, (s.value(c)+s.value(c+1))/2, float64(mid))
				even := c
				if c&1 == 1 {
					even = c + 1
				}
				for _, sign := range []uint8{0, 0x80} {
					sg := func(f float32) float32 {
						if sign != 0 {
							return -f
						}
						return f
					}
					require.Equalf(t, sign|even, s.encode(sg(mid)), "tie %v between %#02x and %#02x", sg(mid), c, c+1)
					require.Equal(t, sign|c, s.encode(sg(math.Nextafter32(mid, 0))))
					require.Equal(t, sign|(c+1), s.encode(sg(math.Nextafter32(mid, float32(math.Inf(1))))))
				}
			}
		})
	}
}

func TestFP8Saturation(t *testing.T) {
	t.Parallel()

	for _, s := range fp8Specs {
		t.Run(s.name, func(t *testing.T) {
			halfStep := s.value(s.maxCode) - s.value(s.maxCode-1)
			for _, x := range []float64{
				s.max, s.max + halfStep/2, s.max + halfStep, s.max + 1.5*halfStep, 2 * s.max,
				1e10, math.MaxFloat32, math.Inf(1),
			} {
				require.Equalf(t, s.maxCode, s.encode(float32(x)), "encode(%v)", x)
				require.Equalf(t, 0x80|s.maxCode, s.encode(float32(-x)), "encode(%v)", -x)
			}
			require.Equal(t, uint8(0x7f), s.encode(float32(math.NaN())))
			require.Equal(t, uint8(0xff), s.encode(float32(math.Copysign(math.NaN(), -1))))
			require.Equal(t, uint8(0x00), s.encode(0))
			require.Equal(t, uint8(0x80), s.encode(float32(math.Copysign(0, -1))))
			require.Equal(t, uint8(0x00), s.encode(math.Float32frombits(1))) // far below the smallest subnormal
		})
	}
}

func TestFP8EncodeRandomAgainstBruteForce(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range fp8Specs {
		t.Run(s.name, func(t *testing.T) {
			for i := range 300_000 {
				var x float32
				if i%2 == 0 { // anything, NaN and Inf included
					x = math.Float32frombits(rng.Uint32())
				} else { // the format's own range and a bit beyond, log-uniform
					e := rng.IntN(2*s.bias+6) - s.bias - s.mantBits - 2
					x = float32(math.Ldexp(1+rng.Float64(), e))
					if rng.IntN(2) == 0 {
						x = -x
					}
				}
				if got, want := s.encode(x), s.nearest(x); got != want {
					require.Failf(t, "mismatch", "encode(%v = %#08x) = %#02x, nearest code is %#02x", x, math.Float32bits(x), got, want)
				}
			}
		})
	}
}
