//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPackInputsDup: packInputsDup lays out every count of inputs in every count of slots
// as packInputsDupGeneric does, bit for bit (NaN payloads included), at every level, for
// several widths, writing nothing past its 2·slots·cols floats.
func TestPackInputsDup(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implMatMulAVX512)
		rng := rand.New(rand.NewPCG(63, 63))
		for _, cols := range []int{8, 16, 64, 776} {
			for _, slots := range []int{2, 6} {
				for k := 0; k <= slots; k++ {
					x := make([]float32, slots*cols)
					fill(rng, kindSpecial, x)
					want := make([]float32, 2*slots*cols+1)
					fill(rng, kindNormal, want)
					got := slices.Clone(want)
					packInputsDupGeneric(want, x, cols, k, slots)
					packInputsDup(got, x, cols, k, slots)
					requireSameResults(t, want, got, true, fmt.Sprintf("cols %d, %d of %d slots", cols, k, slots))
				}
			}
		}
		require.Panics(t, func() { packInputsDup(make([]float32, 32), make([]float32, 15), 8, 2, 2) }, "inputs end early")
		require.Panics(t, func() { packInputsDup(make([]float32, 31), make([]float32, 16), 8, 2, 2) }, "dst ends early")
	})
}
