package quant

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeadRangeIsHeadsPerHead: DotHeadRange and AxpyHeadRange over every run of heads of a
// run of consecutive encoded rows give, for every cache type, the bits of DotHeads and
// AxpyHeads called head by head, with the scores, weights, queries and outputs of each head
// at their strides (the values between them untouched), on 4-byte aligned rows (the f32
// cache's strided kernels) and not (its head-by-head path), with or without next rows to
// prefetch; bad runs, strides and short slices panic.
func TestHeadRangeIsHeadsPerHead(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(7, 7))
	normal := func(v []float32) {
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
	}
	for _, ct := range CacheTypes() {
		for _, s := range []shape{{4, 64}, {2, 32}, {1, 40}, {3, 8}} {
			if ct.Validate(s.kvHeads, s.headDim) != nil {
				continue
			}
			rb := ct.RowBytes(s.kvHeads, s.headDim)
			for _, off := range []int{0, 1} {
				for _, n := range []int{0, 1, 5, 16} {
					buf := make([]byte, off+n*rb)
					rows := buf[off:]
					x := make([]float32, s.kvHeads*s.headDim)
					for i := range n {
						normal(x)
						ct.Encode(rows[i*rb:(i+1)*rb], x, s.kvHeads, s.headDim)
					}
					// The next rows to prefetch (only a hint): none, other rows as many, or fewer.
					other := make([]byte, len(rows))
					for i := range other {
						other[i] = byte(rng.IntN(256))
					}
					next := [][]byte{nil, other, other[:len(other)/3]}[n%3]
					for h0 := range s.kvHeads {
						for h1 := h0; h1 <= s.kvHeads; h1++ {
							what := fmt.Sprintf("%v %v off=%d rows=%d heads [%d, %d)", ct, s, off, n, h0, h1)
							heads := h1 - h0
							rowStride, vecStride := n+1, s.headDim+3
							q := make([]float32, heads*vecStride)
							normal(q)
							want := make([]float32, heads*rowStride)
							normal(want)
							got := slices.Clone(want)
							for j := range heads {
								ct.DotHeads(want[j*rowStride:j*rowStride+n], q[j*vecStride:j*vecStride+s.headDim], rows, h0+j, s.kvHeads, s.headDim)
							}
							ct.DotHeadRange(got, rowStride, q, vecStride, rows, n, h0, h1, s.kvHeads, s.headDim, next)
							requireSameBits(t, want, got, what+" DotHeadRange")

							a := make([]float32, heads*rowStride)
							normal(a)
							wantOut := make([]float32, heads*vecStride)
							normal(wantOut)
							gotOut := slices.Clone(wantOut)
							for j := range heads {
								ct.AxpyHeads(wantOut[j*vecStride:j*vecStride+s.headDim], a[j*rowStride:j*rowStride+n], rows, h0+j, s.kvHeads, s.headDim)
							}
							ct.AxpyHeadRange(gotOut, vecStride, a, rowStride, rows, n, h0, h1, s.kvHeads, s.headDim, next)
							requireSameBits(t, wantOut, gotOut, what+" AxpyHeadRange")
						}
					}
				}
			}
			// One row, every head: the shapes around it panic.
			rows := make([]byte, rb)
			heads := s.kvHeads
			scores, q := make([]float32, heads), make([]float32, heads*s.headDim)
			require.NotPanics(t, func() { ct.DotHeadRange(scores, 1, q, s.headDim, rows, 1, 0, heads, heads, s.headDim, nil) })
			require.Panics(t, func() { ct.DotHeadRange(scores, 1, q, s.headDim, rows, 2, 0, heads, heads, s.headDim, nil) }, "two rows in one")
			require.Panics(t, func() { ct.DotHeadRange(scores, 1, q, s.headDim, rows, 1, 1, 0, heads, s.headDim, nil) }, "a backward run")
			require.Panics(t, func() { ct.DotHeadRange(scores, 1, q, s.headDim, rows, 1, 0, heads+1, heads, s.headDim, nil) }, "a head too many")
			require.Panics(t, func() { ct.DotHeadRange(scores, 1, q, s.headDim-1, rows, 1, 0, heads, heads, s.headDim, nil) }, "a query stride short of a head")
			require.Panics(t, func() { ct.DotHeadRange(scores, 0, q, s.headDim, rows, 1, 0, heads, heads, s.headDim, nil) }, "a score stride short of the rows")
			require.Panics(t, func() { ct.DotHeadRange(scores, 1, q[:len(q)-1], s.headDim, rows, 1, 0, heads, heads, s.headDim, nil) }, "queries end early")
			require.Panics(t, func() { ct.AxpyHeadRange(q, s.headDim, scores[:heads-1], 1, rows, 1, 0, heads, heads, s.headDim, nil) }, "weights end early")
			require.Panics(t, func() { ct.AxpyHeadRange(q[:len(q)-1], s.headDim, scores, 1, rows, 1, 0, heads, heads, s.headDim, nil) }, "outputs end early")
		}
	}
}
