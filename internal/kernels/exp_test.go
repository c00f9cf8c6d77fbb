package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// expInputs returns float32 values spread over every exponent and both signs (a stride
// through all bit patterns), the edges of math.Exp's plain path (results near the float64
// overflow, subnormal and underflow limits), infinities, NaNs and zeros, in a shuffled
// order so that special values land in every lane.
func expInputs(rng *rand.Rand) []float32 {
	var xs []float32
	for b := uint64(0); b < 1<<32; b += 4099 {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	for _, edge := range []float64{709.78, 709.43, 709.44, -708.39, -708.4, -745.13, -745.14, -1000, 88.7, -103.9, -87.3} {
		for d := -64; d <= 64; d++ {
			xs = append(xs, float32(edge)+float32(d)*0.01)
		}
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	for range 100000 {
		xs = append(xs, float32(rng.NormFloat64()*8))
	}
	rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs
}

// TestSoftmaxExponentialsAreMathExp: the exponentials of Softmax are float32(math.Exp(
// float64(x - shift))) for every kind of input, bit for bit (NaN bits aside), whichever
// path runs; and so is SwiGLU's silu.
func TestSoftmaxExponentialsAreMathExp(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implExpAVX512)
		rng := rand.New(rand.NewPCG(30, 30))
		xs := expInputs(rng)
		for _, shift := range []float32{0, 3.5, -700} {
			got := slices.Clone(xs)
			expShifted(got, shift)
			for i, v := range xs {
				want := float32(math.Exp(float64(v - shift)))
				if !sameResult(want, got[i], false) { // tested before require: this runs in a hot loop
					require.FailNow(t, fmt.Sprintf("exp(%g - %g): got %g (%#08x), math.Exp gives %g (%#08x)", v, shift, got[i], math.Float32bits(got[i]), want, math.Float32bits(want)))
				}
			}
		}
		up := make([]float32, len(xs))
		fill(rng, kindMixed, up)
		got := slices.Clone(xs)
		SwiGLU(got, up)
		for i, g := range xs {
			want := float32(float64(g)/(1+math.Exp(-float64(g)))) * up[i]
			if !sameResult(want, got[i], false) { // tested before require: this runs in a hot loop
				require.FailNow(t, fmt.Sprintf("silu(%g)·%g: got %g (%#08x), want %g (%#08x)", g, up[i], got[i], math.Float32bits(got[i]), want, math.Float32bits(want)))
			}
		}
	})
}

// TestSoftmaxMatchesDefinition: Softmax of vectors of every length and kind (scores as
// attention makes them, and extreme ones) equals the plain definition, bit for bit.
func TestSoftmaxMatchesDefinition(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implExpAVX512)
		use(implScaleAVX)
		rng := rand.New(rand.NewPCG(31, 31))
		for _, kind := range []dataKind{kindNormal, kindWide, kindMixed, kindSubnormal, kindNearOverflow} {
			for _, n := range append(testLengths, 257, 1000) {
				x := make([]float32, n)
				fill(rng, kind, x)
				if kind == kindNormal {
					for i := range x {
						x[i] *= 20
					}
				}
				want := slices.Clone(x)
				if n > 0 {
					mx := slices.Max(want)
					var sum float32
					for i, v := range want {
						want[i] = float32(math.Exp(float64(v - mx)))
						sum += want[i]
					}
					inv := 1 / sum
					for i := range want {
						want[i] *= inv
					}
				}
				Softmax(x)
				requireSameResults(t, want, x, false, fmt.Sprintf("%s n=%d", kind, n))
			}
		}
		require.NotPanics(t, func() { Softmax(nil) })
	})
}

// BenchmarkSoftmax is one attention row of 256 scores, at every level this CPU has.
func BenchmarkSoftmax(b *testing.B) {
	x := randomFloats(256, 32)
	buf := make([]float32, 256)
	for _, level := range testLevels() {
		b.Run(level, func(b *testing.B) {
			defer atLevel(level)()
			b.SetBytes(4 * 256)
			cpuLoop(b, 0, func() {
				copy(buf, x)
				Softmax(buf)
			})
		})
	}
}

// BenchmarkSwiGLU is one token of a 2048-wide feed-forward layer, at every level this CPU
// has.
func BenchmarkSwiGLU(b *testing.B) {
	g, u := randomFloats(2048, 33), randomFloats(2048, 34)
	buf := make([]float32, 2048)
	for _, level := range testLevels() {
		b.Run(level, func(b *testing.B) {
			defer atLevel(level)()
			b.SetBytes(4 * 2048)
			cpuLoop(b, 0, func() {
				copy(buf, g)
				SwiGLU(buf, u)
			})
		})
	}
}
