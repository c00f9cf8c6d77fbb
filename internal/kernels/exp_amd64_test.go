//go:build amd64 && !purego

package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExpKernelsStopAtTheOtherPaths: each vector exponential this CPU has does every group
// of eight on math.Exp's plain path and stops before the first group holding an input
// that leaves it (an infinity at index 13: one group done; a NaN in either eight of a
// sixteen the AVX-512 kernel takes together, or in a last eight of its own); what it did
// is math.Exp.
func TestExpKernelsStopAtTheOtherPaths(t *testing.T) {
	type kernel struct {
		impl   *impl
		exp    func(x *float32, n int, shift float32) int
		swiglu func(gate, up *float32, n int) int
	}
	for _, k := range []kernel{{implExpAVX512, expShiftedAVX512, swigluAVX512}, {implExpAVX2, expShiftedAVX2, swigluAVX2}} {
		if !k.impl.testable() {
			continue
		}
		t.Run(k.impl.name, func(t *testing.T) {
			x := randomFloats(64, 70)
			want := make([]float32, 64)
			for i, v := range x {
				want[i] = float32(math.Exp(float64(v - 0.5)))
			}
			got := append([]float32(nil), x...)
			require.Equal(t, 64, k.exp(&got[0], 64, 0.5))
			require.Equal(t, want, got)
			x[13] = float32(math.Inf(1))
			require.Equal(t, 8, k.exp(&x[0], 64, 0.5))
			// A lane outside the plain path in either eight of a sixteen, or in a last
			// eight of their own (72 values): the kernel stops before its eight, and
			// everything before is done.
			for _, at := range []int{3, 13, 20, 29, 67} {
				y := randomFloats(72, 73)
				ref := make([]float32, 72)
				for i, v := range y {
					ref[i] = float32(math.Exp(float64(v - 0.5)))
				}
				y[at] = float32(math.NaN())
				done := k.exp(&y[0], 72, 0.5)
				require.Equal(t, at/8*8, done, "NaN at %d", at)
				require.Equal(t, ref[:done], y[:done], "NaN at %d", at)
			}
			z := randomFloats(72, 74)
			ref := make([]float32, 72)
			for i, v := range z {
				ref[i] = float32(math.Exp(float64(v - 0.5)))
			}
			require.Equal(t, 72, k.exp(&z[0], 72, 0.5))
			require.Equal(t, ref, z)

			g, up := randomFloats(64, 71), randomFloats(64, 72)
			for i, v := range g {
				want[i] = float32(float64(v)/(1+math.Exp(-float64(v)))) * up[i]
			}
			require.Equal(t, 64, k.swiglu(&g[0], &up[0], 64))
			require.Equal(t, want, g)
		})
	}
}
