//go:build amd64 && !purego

package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExpKernelsStopAtTheOtherPaths: each vector exponential this CPU has does every group
// of eight on math.Exp's plain path and stops before the first group holding an input
// that leaves it (here an infinity at index 13: two groups done); what it did is math.Exp.
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

			g, up := randomFloats(64, 71), randomFloats(64, 72)
			for i, v := range g {
				want[i] = float32(float64(v)/(1+math.Exp(-float64(v)))) * up[i]
			}
			require.Equal(t, 64, k.swiglu(&g[0], &up[0], 64))
			require.Equal(t, want, g)
		})
	}
}
