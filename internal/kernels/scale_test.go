package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScaleAndMaxAreTheLoops: Scale is scaleGeneric and maxOf is maxGeneric, bit for bit,
// at every level, for every length and kind of data (NaNs, infinities and zeros of both
// signs included), from misaligned starts; maxOf may give the other zero where maxGeneric
// gives a zero (Softmax's results do not depend on it, see maxOf).
func TestScaleAndMaxAreTheLoops(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implScaleAVX)
		rng := rand.New(rand.NewPCG(64, 64))
		for _, kind := range allKinds {
			for _, n := range append(testLengths, 31, 33, 127, 257, 1000) {
				x := at(n, rng.IntN(8))
				fill(rng, kind, x)
				what := fmt.Sprintf("%s n=%d", kind, n)
				if n > 0 {
					want, got := maxGeneric(x), maxOf(x)
					require.True(t, math.Float32bits(want) == math.Float32bits(got) || want != want && got != got || want == 0 && got == 0,
						"max %s: %v (%#08x) against %v (%#08x)", what, got, math.Float32bits(got), want, math.Float32bits(want))
					// A NaN first element stays, as in the loop.
					x[0] = float32(math.NaN())
					require.True(t, math.IsNaN(float64(maxOf(x))), "max %s with a NaN first", what)
				}
				for _, s := range []float32{0.125, -3.5, float32(math.Inf(1)), 0, float32(math.NaN()), 1e-30} {
					want, got := slices.Clone(x), slices.Clone(x)
					scaleGeneric(want, s)
					Scale(got, s)
					requireSameResults(t, want, got, true, fmt.Sprintf("scale %s by %v", what, s))
				}
			}
		}
	})
}
