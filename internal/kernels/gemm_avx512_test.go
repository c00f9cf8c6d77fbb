//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPackInputsDup: packInputsDup and packInputBlocks lay out every count of inputs in
// every count of slots as packInputsDupGeneric and packInputBlocksGeneric do, bit for bit
// (NaN payloads included), at every level, for several widths, writing nothing past their
// 2·slots·cols and slots·cols floats.
func TestPackInputsDup(t *testing.T) {
	packers := []struct {
		name          string
		per           int // floats written per input value
		pack, generic func(dst, x []float32, cols, k, slots int)
	}{
		{"packInputsDup", 2, packInputsDup, packInputsDupGeneric},
		{"packInputBlocks", 1, packInputBlocks, packInputBlocksGeneric},
	}
	forEachLevel(t, func(t *testing.T) {
		use(implMatMulAVX512)
		rng := rand.New(rand.NewPCG(63, 63))
		for _, p := range packers {
			for _, cols := range []int{8, 16, 64, 776} {
				for _, slots := range []int{2, 6} {
					for k := 0; k <= slots; k++ {
						x := make([]float32, slots*cols)
						fill(rng, kindSpecial, x)
						want := make([]float32, p.per*slots*cols+1)
						fill(rng, kindNormal, want)
						got := slices.Clone(want)
						p.generic(want, x, cols, k, slots)
						p.pack(got, x, cols, k, slots)
						requireSameResults(t, want, got, true, fmt.Sprintf("%s: cols %d, %d of %d slots", p.name, cols, k, slots))
					}
				}
			}
			require.Panics(t, func() { p.pack(make([]float32, 16*p.per), make([]float32, 15), 8, 2, 2) }, "%s: inputs end early", p.name)
			require.Panics(t, func() { p.pack(make([]float32, 16*p.per-1), make([]float32, 16), 8, 2, 2) }, "%s: dst ends early", p.name)
		}
	})
}
