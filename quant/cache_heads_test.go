package quant

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeadsAreHeadPerRow: DotHeads and AxpyHeads over a run of consecutive encoded rows
// give, for every cache type, every head and run lengths from 0 up, the bits of DotHead
// and AxpyHead called row by row in order, whether the rows are 4-byte aligned (the f32
// cache's strided kernels) or not (its row-by-row path); too few rows panic.
func TestHeadsAreHeadPerRow(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(5, 5))
	for _, ct := range CacheTypes() {
		for _, s := range []shape{{4, 64}, {2, 32}, {1, 40}, {3, 8}} {
			if ct.Validate(s.kvHeads, s.headDim) != nil {
				continue
			}
			rb := ct.RowBytes(s.kvHeads, s.headDim)
			for _, off := range []int{0, 1} {
				for _, n := range []int{0, 1, 3, 4, 5, 16} {
					buf := make([]byte, off+n*rb)
					rows := buf[off:]
					x := make([]float32, s.kvHeads*s.headDim)
					for i := range n {
						for j := range x {
							x[j] = float32(rng.NormFloat64())
						}
						ct.Encode(rows[i*rb:(i+1)*rb], x, s.kvHeads, s.headDim)
					}
					q := make([]float32, s.headDim)
					for j := range q {
						q[j] = float32(rng.NormFloat64())
					}
					for head := range s.kvHeads {
						what := fmt.Sprintf("%v %v off=%d rows=%d head=%d", ct, s, off, n, head)
						want := make([]float32, n)
						for i := range n {
							want[i] = ct.DotHead(q, rows[i*rb:(i+1)*rb], head, s.kvHeads, s.headDim)
						}
						got := make([]float32, n)
						ct.DotHeads(got, q, rows, head, s.kvHeads, s.headDim)
						requireSameBits(t, want, got, what+" DotHeads")

						a := make([]float32, n)
						for i := range a {
							a[i] = float32(rng.NormFloat64())
						}
						wantOut := slices.Clone(q)
						for i := range n {
							ct.AxpyHead(wantOut, a[i], rows[i*rb:(i+1)*rb], head, s.kvHeads, s.headDim)
						}
						gotOut := slices.Clone(q)
						ct.AxpyHeads(gotOut, a, rows, head, s.kvHeads, s.headDim)
						requireSameBits(t, wantOut, gotOut, what+" AxpyHeads")
					}
					if n > 0 {
						require.Panics(t, func() { ct.DotHeads(make([]float32, n+1), q, rows, 0, s.kvHeads, s.headDim) })
						require.Panics(t, func() { ct.AxpyHeads(q, make([]float32, n+1), rows, 0, s.kvHeads, s.headDim) })
					}
				}
			}
		}
	}
}

// requireSameBits fails unless want and got hold the same float32 bit patterns.
func requireSameBits(t *testing.T, want, got []float32, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.Truef(t, sameBits(want[i], got[i]), "%s [%d]: got %v want %v", what, i, got[i], want[i])
	}
}
