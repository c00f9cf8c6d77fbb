package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQ8_0HeadsStridedIsDecodeThenF32: DotQ8_0HeadsStrided and AxpyQ8_0HeadsStrided equal
// Dot and Axpy of each head decoded by DecodeQ8_0Strided, bit for bit, at every level, for
// runs of 1-3 heads of 32-128 values in 0-16 rows, with random bytes between the rows (a
// kernel that read them would show it), scales that include zero, subnormal, infinite and
// NaN halves, and no, as many or fewer next rows to ask for; the values between the
// per-head results stay as they were, and bad shapes panic.
func TestQ8_0HeadsStridedIsDecodeThenF32(t *testing.T) {
	scales := []uint16{0x3c00, 0x2e66, 0x0001, 0x0000, 0xbc00, 0x5640, 0x1400, 0x7bff, 0x7c00, 0x7e01}
	forEachLevel(t, func(t *testing.T) {
		use(implQ8HeadsAVX2)
		use(implDecodeQ8_0AVX2)
		rng := rand.New(rand.NewPCG(62, 62))
		for _, heads := range []int{1, 2, 3} {
			for _, dim := range []int{32, 64, 96, 128} {
				for _, rows := range []int{0, 1, 3, 4, 5, 9, 16} {
					for _, gap := range []int{0, 5, 100} {
						hb := dim / QBlockLen * Q8_0BlockBytes
						stride := heads*hb + gap
						span := max(rows-1, 0)*stride + heads*hb
						w := byteBuf(span, 1+rng.IntN(3))
						for i := range w {
							w[i] = byte(rng.IntN(256))
						}
						special := (heads+dim+rows+gap)%4 == 0 // some infinite and NaN scales
						for r := range rows {
							for b := range heads * dim / QBlockLen {
								blk := w[r*stride+b*Q8_0BlockBytes:]
								d := scales[rng.IntN(len(scales)-2)]
								if special && rng.IntN(8) == 0 {
									d = scales[len(scales)-2+rng.IntN(2)]
								}
								blk[0], blk[1] = byte(d), byte(d>>8)
							}
						}
						pad := (heads + rows + gap) % 3
						outStride, qStride := rows+pad, dim+pad
						q := make([]float32, (heads-1)*qStride+dim)
						fill(rng, kindNormal, q)
						a := make([]float32, (heads-1)*outStride+rows)
						fill(rng, kindNormal, a)
						dec := make([]float32, dim)
						want := slices.Repeat([]float32{42}, len(a)+1)
						dst := make([]float32, len(q)+1)
						fill(rng, kindNormal, dst)
						sum := slices.Clone(dst)
						for h := range heads {
							for r := range rows {
								DecodeQ8_0Strided(dec, w[r*stride+h*hb:], dim/QBlockLen, hb, nil)
								want[h*outStride+r] = Dot(q[h*qStride:h*qStride+dim], dec)
								Axpy(sum[h*qStride:h*qStride+dim], a[h*outStride+r], dec)
							}
						}
						what := fmt.Sprintf("%d heads of %d, %d rows, gap %d", heads, dim, rows, gap)
						// The portable definition, head by head.
						gen := slices.Repeat([]float32{42}, len(want))
						for h := range heads {
							dotQ8_0RowsStridedGeneric(gen[h*outStride:h*outStride+rows], q[h*qStride:h*qStride+dim], w[h*hb:], stride)
						}
						requireSameResults(t, want, gen, false, "dotQ8_0RowsStridedGeneric "+what)
						other := byteBuf(len(w), 0)
						for _, next := range [][]byte{nil, other, other[:len(other)/2]} {
							got := slices.Repeat([]float32{42}, len(want))
							DotQ8_0HeadsStrided(got[:len(a)], outStride, q, qStride, heads, dim, w, rows, stride, next)
							requireSameResults(t, want, got, false, fmt.Sprintf("DotQ8_0HeadsStrided %s, next %d bytes", what, len(next)))
							gotSum := slices.Clone(dst)
							AxpyQ8_0HeadsStrided(gotSum[:len(q)], qStride, a, outStride, heads, dim, w, rows, stride, next)
							requireSameResults(t, sum, gotSum, false, fmt.Sprintf("AxpyQ8_0HeadsStrided %s, next %d bytes", what, len(next)))
						}
					}
				}
			}
		}

		// Two heads of 32 in two rows of 68 bytes.
		out, q, w := make([]float32, 4), make([]float32, 64), make([]byte, 136)
		require.NotPanics(t, func() { DotQ8_0HeadsStrided(out, 2, q, 32, 2, 32, w, 2, 68, w) })
		require.NotPanics(t, func() { AxpyQ8_0HeadsStrided(q, 32, out, 2, 2, 32, w, 2, 68, nil) })
		require.Panics(t, func() { DotQ8_0HeadsStrided(out, 2, q, 32, 2, 32, w[:135], 2, 68, nil) }, "rows end early")
		require.Panics(t, func() { DotQ8_0HeadsStrided(out, 2, q, 32, 2, 32, w, 2, 67, nil) }, "stride shorter than the heads")
		require.Panics(t, func() { DotQ8_0HeadsStrided(out, 2, q, 16, 4, 16, w, 2, 68, nil) }, "a head of part of a block")
		require.Panics(t, func() { DotQ8_0HeadsStrided(out[:3], 2, q, 32, 2, 32, w, 2, 68, nil) }, "scores end early")
		require.Panics(t, func() { AxpyQ8_0HeadsStrided(q[:63], 32, out, 2, 2, 32, w, 2, 68, nil) }, "outputs end early")
		require.Panics(t, func() { AxpyQ8_0HeadsStrided(q, 32, out, 2, 2, 32, w[:135], 2, 68, nil) }, "values end early")
	})
}
