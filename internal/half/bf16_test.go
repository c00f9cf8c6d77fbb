package half

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// bf16FromFields computes a bfloat16's value from its bit fields, independently of the
// shift in BF16ToF32.
func bf16FromFields(b uint16) float64 {
	sign := 1.0
	if b&0x8000 != 0 {
		sign = -1
	}
	e := int(b>>7) & 0xff
	m := int(b & 0x7f)
	switch {
	case e == 0xff && m == 0:
		return sign * math.Inf(1)
	case e == 0xff:
		return math.NaN()
	case e == 0:
		return sign * math.Ldexp(float64(m), -126-7)
	default:
		return sign * math.Ldexp(float64(128+m), e-127-7)
	}
}

func TestBF16ToF32AllPatterns(t *testing.T) {
	t.Parallel()

	for b := range 1 << 16 {
		got := BF16ToF32(uint16(b))
		require.Equal(t, uint32(b)<<16, math.Float32bits(got))
		want := bf16FromFields(uint16(b))
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(float64(got)))
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			require.Failf(t, "mismatch", "BF16ToF32(%#04x) = %v, bit fields give %v", b, got, want)
		}
	}
}

func TestF32ToBF16RoundTripsEveryPattern(t *testing.T) {
	t.Parallel()

	for b := range 1 << 16 {
		f := BF16ToF32(uint16(b))
		got := F32ToBF16(f)
		if math.IsNaN(float64(f)) {
			require.Equalf(t, uint16(b)|0x0040, got, "NaN %#04x must come back quiet with sign and payload", b)
			require.True(t, math.IsNaN(float64(BF16ToF32(got))))
			continue
		}
		require.Equalf(t, uint16(b), got, "F32ToBF16(BF16ToF32(%#04x))", b)
	}
}

// bf16Nearest is a slow reference: the nearer of the two bfloat16 values around f, ties
// to the even one, with IEEE overflow to Inf.
func bf16Nearest(f float32) uint16 {
	bits := math.Float32bits(f)
	lo := uint16(bits >> 16) // truncation: the neighbour towards zero
	if bits&0xffff == 0 {
		return lo
	}
	hi := lo + 1
	a := math.Abs(float64(f))
	loV := math.Abs(float64(BF16ToF32(lo)))
	hiV := math.Abs(float64(BF16ToF32(hi)))
	if hi&0x7fff == 0x7f80 { // the step above the largest finite bfloat16
		hiV = math.Ldexp(1, 128)
	}
	switch dLo, dHi := a-loV, hiV-a; {
	case dLo < dHi:
		return lo
	case dHi < dLo:
		return hi
	case lo&1 == 0:
		return lo
	default:
		return hi
	}
}

func TestF32ToBF16RandomAgainstNearest(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(3, 4))
	for range 1_000_000 {
		f := math.Float32frombits(rng.Uint32())
		if math.IsNaN(float64(f)) {
			got := F32ToBF16(f)
			require.True(t, math.IsNaN(float64(BF16ToF32(got))))
			require.Equal(t, math.Signbit(float64(f)), got&0x8000 != 0)
			continue
		}
		if got, want := F32ToBF16(f), bf16Nearest(f); got != want {
			require.Failf(t, "mismatch", "F32ToBF16(%v = %#08x) = %#04x, want %#04x", f, math.Float32bits(f), got, want)
		}
	}
}

func TestF32ToBF16SpecialValues(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		x    float32
		want uint16
	}{
		{1, 0x3f80},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie, even stays
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie, odd rounds up
		{math.Float32frombits(0x3f808001), 0x3f81},
		{math.MaxFloat32, 0x7f80}, // rounds beyond the largest bfloat16: Inf
		{math.Float32frombits(0x7f7f7fff), 0x7f7f},
		{float32(math.Inf(-1)), 0xff80},
		{math.Float32frombits(0x7f800001), 0x7fc0}, // NaN with a low payload stays NaN
		{math.Float32frombits(0xff800001), 0xffc0},
		{math.Float32frombits(0x00008000), 0x0000}, // subnormal tie to even zero
		{math.Float32frombits(0x00018000), 0x0002},
	} {
		require.Equalf(t, c.want, F32ToBF16(c.x), "F32ToBF16(%#08x)", math.Float32bits(c.x))
	}
}
