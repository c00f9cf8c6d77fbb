package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// headsCase is one shape for the *HeadsStrided tests: heads heads of dim values in rows
// rows, gap units (floats or halves) between one row's last head and the next row, and
// pad values between the per-head results (outStride = rows + pad) and vectors (qStride
// = dim + pad).
type headsCase struct{ heads, dim, rows, gap, pad int }

func headsCases() []headsCase {
	var cs []headsCase
	for _, heads := range []int{1, 2, 3, 5} {
		for _, dim := range []int{1, 8, 24, 64, 72} {
			for _, rows := range []int{0, 1, 4, 5, 9, 16} {
				for _, gap := range []int{0, 8, 3 * dim} {
					cs = append(cs, headsCase{heads, dim, rows, gap, (heads + rows + gap) % 3})
				}
			}
		}
	}
	return cs
}

// TestHeadsStridedIsOneHeadAtATime: DotHeadsStrided, DotF16HeadsStrided, AxpyHeadsStrided
// and AxpyF16HeadsStrided equal Dot, DotF16 and Axpy row by row for each head, bit for bit,
// at every level, for runs of 1-5 heads of 1-72 values in 0-16 rows with NaNs wherever no
// head is (a kernel that read them would show it), and the f16 kernels the same whether
// they prefetch no next rows, as many or fewer; the values between the per-head results
// stay as they were, and short slices or strides panic.
func TestHeadsStridedIsOneHeadAtATime(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implF16AVX2)
		use(implAxpyF16AVX2)
		use(implMatVecAVX)
		use(implAxpyRowsAVX)
		rng := rand.New(rand.NewPCG(61, 61))
		nan := float32(math.NaN())
		for _, c := range headsCases() {
			what := fmt.Sprintf("%+v", c)
			width := c.heads * c.dim
			stride := width + c.gap
			span := max(c.rows-1, 0)*stride + width
			// f32 rows, NaN between them.
			w := at(span, rng.IntN(8))
			for i := range w {
				w[i] = nan
			}
			for r := range c.rows {
				fill(rng, kindNormal, w[r*stride:r*stride+width])
			}
			// f16 rows, NaN halves between them.
			wh := byteBuf(2*span, 1+rng.IntN(3))
			for i := 0; i+1 < len(wh); i += 2 {
				putLE16(wh[i:], 0x7e00)
			}
			for r := range c.rows {
				fillRow(rng, rowKinds[0], halfNormal, wh[2*r*stride:2*(r*stride+width)], width)
			}
			outStride, qStride := c.rows+c.pad, c.dim+c.pad
			q := make([]float32, max(c.heads-1, 0)*qStride+c.dim)
			fill(rng, kindNormal, q)
			a := make([]float32, max(c.heads-1, 0)*outStride+c.rows)
			fill(rng, kindNormal, a)

			// Scores: head h's at out[h·outStride:], 42 elsewhere.
			want := make([]float32, len(a)+1)
			wantH := make([]float32, len(a)+1)
			for i := range want {
				want[i], wantH[i] = 42, 42
			}
			for h := range c.heads {
				qh := q[h*qStride : h*qStride+c.dim]
				for r := range c.rows {
					o := r*stride + h*c.dim
					want[h*outStride+r] = Dot(qh, w[o:o+c.dim])
					wantH[h*outStride+r] = DotF16(qh, wh[2*o:2*(o+c.dim)])
				}
			}
			got := slices.Repeat([]float32{42}, len(want))
			DotHeadsStrided(got[:len(a)], outStride, q, qStride, c.heads, c.dim, w, c.rows, stride)
			requireSameResults(t, want, got, false, "DotHeadsStrided "+what)
			// The next rows to prefetch: none, as many (other values), and fewer.
			other := byteBuf(len(wh), 0)
			for i := range other {
				other[i] = byte(rng.IntN(256))
			}
			nexts := [][]byte{nil, other, other[:len(other)/2]}
			for _, next := range nexts {
				gotH := slices.Repeat([]float32{42}, len(want))
				DotF16HeadsStrided(gotH[:len(a)], outStride, q, qStride, c.heads, c.dim, wh, c.rows, 2*stride, next)
				requireSameResults(t, wantH, gotH, false, fmt.Sprintf("DotF16HeadsStrided %s next %d bytes", what, len(next)))
			}

			// Weighted sums: head h's output at dst[h·qStride:], the values between kept.
			dst := make([]float32, len(q)+1)
			fill(rng, kindNormal, dst)
			sum, sumH := slices.Clone(dst), slices.Clone(dst)
			for h := range c.heads {
				for r := range c.rows {
					o := r*stride + h*c.dim
					Axpy(sum[h*qStride:h*qStride+c.dim], a[h*outStride+r], w[o:o+c.dim])
					Axpy(sumH[h*qStride:h*qStride+c.dim], a[h*outStride+r], widenF16(wh[2*o:2*(o+c.dim)]))
				}
			}
			gotSum := slices.Clone(dst)
			AxpyHeadsStrided(gotSum[:len(q)], qStride, a, outStride, c.heads, c.dim, w, c.rows, stride)
			requireSameResults(t, sum, gotSum, false, "AxpyHeadsStrided "+what)
			for _, next := range nexts {
				gotSumH := slices.Clone(dst)
				AxpyF16HeadsStrided(gotSumH[:len(q)], qStride, a, outStride, c.heads, c.dim, wh, c.rows, 2*stride, next)
				requireSameResults(t, sumH, gotSumH, false, fmt.Sprintf("AxpyF16HeadsStrided %s next %d bytes", what, len(next)))
			}
		}

		// Two heads of 8 in two rows of 16 floats (32 bytes of halves).
		out, q, w, wh := make([]float32, 4), make([]float32, 16), make([]float32, 32), make([]byte, 64)
		require.NotPanics(t, func() { DotHeadsStrided(out, 2, q, 8, 2, 8, w, 2, 16) })
		require.NotPanics(t, func() { DotF16HeadsStrided(out, 2, q, 8, 2, 8, wh, 2, 32, wh) })
		require.Panics(t, func() { DotHeadsStrided(out, 2, q, 8, 2, 8, w[:31], 2, 16) }, "rows end early")
		require.Panics(t, func() { DotHeadsStrided(out, 2, q, 8, 2, 8, w, 2, 15) }, "stride shorter than the heads")
		require.Panics(t, func() { DotHeadsStrided(out[:3], 2, q, 8, 2, 8, w, 2, 16) }, "scores end early")
		require.Panics(t, func() { DotHeadsStrided(out, 1, q, 8, 2, 8, w, 2, 16) }, "score stride shorter than the rows")
		require.Panics(t, func() { DotHeadsStrided(out, 2, q[:15], 8, 2, 8, w, 2, 16) }, "queries end early")
		require.Panics(t, func() { DotHeadsStrided(out, 2, q, 7, 2, 8, w, 2, 16) }, "query stride shorter than a head")
		require.Panics(t, func() { DotHeadsStrided(out, 2, q, 8, 2, 0, w, 2, 16) }, "a head of no values")
		require.Panics(t, func() { DotF16HeadsStrided(out, 2, q, 8, 2, 8, wh[:63], 2, 32, nil) }, "f16 rows end early")
		require.Panics(t, func() { DotF16HeadsStrided(out, 2, q, 8, 2, 8, wh, 2, 31, nil) }, "f16 stride shorter than the heads")
		require.Panics(t, func() { AxpyHeadsStrided(q, 8, out[:3], 2, 2, 8, w, 2, 16) }, "weights end early")
		require.Panics(t, func() { AxpyHeadsStrided(q[:15], 8, out, 2, 2, 8, w, 2, 16) }, "outputs end early")
		require.Panics(t, func() { AxpyF16HeadsStrided(q, 8, out, 2, 2, 8, wh[:63], 2, 32, wh) }, "f16 values end early")
	})
}

// widenF16 widens the binary16 values in b.
func widenF16(b []byte) []float32 {
	v := make([]float32, len(b)/2)
	DecodeF16(v, b)
	return v
}
