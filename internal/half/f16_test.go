package half

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

// x448F16 is the reference conversion float32 -> half bits.
func x448F16(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

func TestF16ToF32AllPatternsMatchX448(t *testing.T) {
	for h := range 1 << 16 {
		got := F16ToF32(uint16(h))
		want := float16.Frombits(uint16(h)).Float32()
		if math.IsNaN(float64(want)) {
			require.Truef(t, math.IsNaN(float64(got)), "F16ToF32(%#04x) = %v, want NaN", h, got)
		}
		// x448 keeps the sign and payload of NaNs and sets the quiet bit; so do we, so
		// the bits agree for every pattern, NaNs included.
		if math.Float32bits(got) != math.Float32bits(want) {
			require.Failf(t, "mismatch", "F16ToF32(%#04x) = %#08x, x448 gives %#08x",
				h, math.Float32bits(got), math.Float32bits(want))
		}
	}
}

func TestF16TableEqualsBitTwiddling(t *testing.T) {
	t.Parallel()

	for h := range 1 << 16 {
		if math.Float32bits(F16Table[h]) != math.Float32bits(F16ToF32(uint16(h))) {
			require.Failf(t, "mismatch", "F16Table[%#04x] = %v, F16ToF32 = %v", h, F16Table[h], F16ToF32(uint16(h)))
		}
	}
}

func TestF32ToF16RoundTripsEveryHalf(t *testing.T) {
	t.Parallel()

	for h := range 1 << 16 {
		f := F16ToF32(uint16(h))
		got := F32ToF16(f)
		if got != x448F16(f) {
			require.Failf(t, "mismatch", "F32ToF16(F16ToF32(%#04x)) = %#04x, x448 gives %#04x", h, got, x448F16(f))
		}
		if math.IsNaN(float64(f)) {
			// A NaN comes back as a quiet NaN with the same sign and payload.
			require.Equalf(t, uint16(h)|0x0200, got, "NaN %#04x", h)
		} else {
			require.Equalf(t, uint16(h), got, "F32ToF16(F16ToF32(%#04x))", h)
		}
	}
}

// TestF32ToF16Halfway checks every midpoint between two neighbouring halves (and the
// float32 neighbours of each midpoint): ties go to the even half, everything else to the
// nearer one, and x448 agrees.
func TestF32ToF16Halfway(t *testing.T) {
	t.Parallel()

	for h := uint16(0); h < 0x7c00; h++ { // every finite non-negative half, with its successor
		lo := float64(F16ToF32(h))
		hi := math.Ldexp(1, 16) // the successor of 65504 on the binade grid
		if h+1 < 0x7c00 {
			hi = float64(F16ToF32(h + 1))
		}
		mid := float32((lo + hi) / 2) // exact: 12 significant bits
		require.Equal(t, (lo+hi)/2, float64(mid))
		even := h
		if h&1 == 1 {
			even = h + 1
		}
		below := math.Nextafter32(mid, 0)
		above := math.Nextafter32(mid, float32(math.Inf(1)))
		for _, s := range []uint16{0, 0x8000} {
			neg := s != 0
			sg := func(f float32) float32 {
				if neg {
					return -f
				}
				return f
			}
			for _, c := range []struct {
				x    float32
				want uint16
			}{{mid, even}, {below, h}, {above, h + 1}} {
				got := F32ToF16(sg(c.x))
				if got != s|c.want || got != x448F16(sg(c.x)) {
					require.Failf(t, "mismatch", "F32ToF16(%v) = %#04x, want %#04x (x448 %#04x)", sg(c.x), got, s|c.want, x448F16(sg(c.x)))
				}
			}
		}
	}
}

func TestF32ToF16SpecialValues(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		x    float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{65504, 0x7bff},
		{65519.996, 0x7bff},
		{65520, 0x7c00}, // the midpoint to 2^16 ties to even, which is Inf
		{1e10, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{0x1p-14, 0x0400},
		{0x1p-24, 0x0001},
		{0x1p-25, 0x0000},                          // tie between 0 and 2^-24: even is 0
		{math.Nextafter32(0x1p-25, 1), 0x0001},     // just above the tie
		{0x1.8p-24, 0x0002},                        // tie between 1 and 2: even is 2
		{math.Float32frombits(1), 0x0000},          // smallest float32 subnormal
		{float32(math.NaN()), 0x7e00},              // Go's NaN has payload 1: quiet, low bits lost
		{math.Float32frombits(0x7f800001), 0x7e00}, // signaling NaN becomes quiet
		{math.Float32frombits(0xffc12000), 0xfe09}, // sign and top payload bits kept
	} {
		require.Equalf(t, c.want, F32ToF16(c.x), "F32ToF16(%v)", c.x)
		require.Equalf(t, x448F16(c.x), F32ToF16(c.x), "x448 on %v", c.x)
	}
}

func TestF32ToF16RandomBitPatternsMatchX448(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		f := math.Float32frombits(rng.Uint32())
		if got, want := F32ToF16(f), x448F16(f); got != want {
			require.Failf(t, "mismatch", "F32ToF16(%v = %#08x) = %#04x, x448 gives %#04x", f, math.Float32bits(f), got, want)
		}
	}
}

// TestF32ToF16Exhaustive compares all 2^32 float32 patterns with x448. It takes several
// seconds of CPU, so it runs only with KVREF_EXHAUSTIVE=1.
func TestF32ToF16Exhaustive(t *testing.T) {
	if os.Getenv("KVREF_EXHAUSTIVE") == "" {
		t.Skip("set KVREF_EXHAUSTIVE=1 to compare all 2^32 float32 patterns with x448")
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	bad := make([]uint64, workers)
	for w := range workers {
		wg.Go(func() {
			for u := uint64(w); u < 1<<32; u += uint64(workers) {
				f := math.Float32frombits(uint32(u))
				if F32ToF16(f) != x448F16(f) {
					bad[w]++
				}
			}
		})
	}
	wg.Wait()
	for w, n := range bad {
		require.Zerof(t, n, "worker %d found %d mismatches", w, n)
	}
}
