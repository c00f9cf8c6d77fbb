package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRoPEApplyQKIsApplyTwice: rotating queries and keys together gives each what Apply
// gives it, and Apply turns pair (a, b) by pos·θ_i: checked against a float64 rotation for
// both styles.
func TestRoPEApplyQKIsApplyTwice(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 40))
	for _, style := range []RoPEStyle{RoPEAdjacent, RoPEHalves} {
		r := NewRoPE(style, 16, 10000)
		for _, pos := range []int{0, 1, 7, 300, 4095} {
			q, k := make([]float32, 4*16), make([]float32, 2*16)
			fill(rng, kindNormal, q)
			fill(rng, kindNormal, k)
			wantQ, wantK := slices.Clone(q), slices.Clone(k)
			r.Apply(wantQ, 4, 16, pos)
			r.Apply(wantK, 2, 16, pos)
			gotQ, gotK := slices.Clone(q), slices.Clone(k)
			r.ApplyQK(gotQ, 4, gotK, 2, 16, pos)
			require.Equal(t, wantQ, gotQ)
			require.Equal(t, wantK, gotK)
			for i := range 8 {
				a, b := 2*i, 2*i+1
				if style == RoPEHalves {
					a, b = i, i+8
				}
				th := float64(pos) * math.Pow(10000, -float64(2*i)/16)
				x0, x1 := float64(q[a]), float64(q[b])
				require.InDelta(t, x0*math.Cos(th)-x1*math.Sin(th), float64(wantQ[a]), 1e-5)
				require.InDelta(t, x0*math.Sin(th)+x1*math.Cos(th), float64(wantQ[b]), 1e-5)
			}
		}
	}
}
