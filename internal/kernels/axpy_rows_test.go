package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAxpyRowsIsAxpyPerRow: AxpyRows equals one Axpy per row in order, bit for bit (NaN
// bits excepted when the inputs hold NaNs other than the default one), for every length
// (the chunks of 64 and 8 or 16 columns and the columns after them), row counts from 0 up,
// misaligned slices, and every kind of data; rows of x longer than dst are not involved.
func TestAxpyRowsIsAxpyPerRow(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implAxpyRowsAVX)
		use(implAxpyRowsAVX512)
		rng := rand.New(rand.NewPCG(21, 21))
		for _, kind := range allKinds {
			for _, n := range append(testLengths, 72, 80, 128, 136, 200, 264) {
				for _, rows := range []int{0, 1, 2, 5, 17} {
					off := rng.IntN(8)
					x := at(rows*n+3, off)
					fill(rng, kind, x)
					a := make([]float32, rows)
					fill(rng, kind, a)
					got := at(n, (off+5)%8)
					fill(rng, kind, got)
					want := slices.Clone(got)
					for r := range rows {
						Axpy(want, a[r], x[r*n:(r+1)*n])
					}
					plain := slices.Clone(got)
					axpyRowsGeneric(plain, a, x[:rows*n], n)
					AxpyRows(got, a, x)
					strict := onlyDefaultNaN(x, a, want)
					what := fmt.Sprintf("%s n=%d rows=%d", kind, n, rows)
					requireSameResults(t, want, plain, strict, what+" (portable)")
					requireSameResults(t, want, got, strict, what)
				}
			}
		}
	})
}

// TestAxpyRowsAliasing: dst inside x gives the plain loop's result; a short x panics.
func TestAxpyRowsAliasing(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implAxpyRowsAVX)
		rng := rand.New(rand.NewPCG(22, 22))
		for _, n := range []int{8, 9, 64, 100} {
			for _, dstAt := range []int{0, 3, n, 2*n + 1} {
				buf := make([]float32, 4*n+8)
				fill(rng, kindNormal, buf)
				ref := slices.Clone(buf)
				a := []float32{0.5, -2, 3}
				AxpyRows(buf[dstAt:dstAt+n], a, buf[:3*n])
				axpyRowsGeneric(ref[dstAt:dstAt+n], a, ref[:3*n], n)
				requireSameResults(t, ref, buf, true, fmt.Sprintf("n=%d dst at %d", n, dstAt))
			}
		}
		require.Panics(t, func() { AxpyRows(make([]float32, 8), make([]float32, 3), make([]float32, 23)) })
		require.NotPanics(t, func() { AxpyRows(nil, make([]float32, 3), nil) })
	})
}

// BenchmarkAxpyRows is attention's weighted sum of value rows: 256 rows of 64 values into
// one output, as AxpyRows and as one Axpy per row.
func BenchmarkAxpyRows(b *testing.B) {
	const rows, n = 256, 64
	x := randomFloats(rows*n, 23)
	a := randomFloats(rows, 24)
	dst := make([]float32, n)
	b.Run("rows", func(b *testing.B) {
		b.SetBytes(4 * rows * n)
		for b.Loop() {
			AxpyRows(dst, a, x)
		}
	})
	b.Run("axpy", func(b *testing.B) {
		b.SetBytes(4 * rows * n)
		for b.Loop() {
			for r := range rows {
				Axpy(dst, a[r], x[r*n:(r+1)*n])
			}
		}
	})
}

// BenchmarkAxpyF16RowsStrided adds one 16-slot block of one 64-wide head of an f16 cache
// (rows 1,536 bytes apart, stories110M's row) to an output, in L1, three ways alternating in
// one run: AxpyF16RowsStrided ("fused"), DecodeF16Strided then AxpyRows ("widened", what
// attention did before), and the portable twin ("portable"); it reports each one's ns per
// row and the fused one's time over the others'.
//
//	go test ./internal/kernels -run '^$' -bench AxpyF16RowsStrided
func BenchmarkAxpyF16RowsStrided(b *testing.B) {
	const rows, n, stride, reps = 16, 64, 1536, 64
	x := make([]byte, (rows-1)*stride+2*n)
	for i := range x {
		x[i] = byte(i*7%61 + 1)
	}
	a := randomFloats(rows, 25)
	dst := make([]float32, n)
	wide := make([]float32, rows*n)
	ways := []func(){
		func() { AxpyF16RowsStrided(dst, a, x, stride) },
		func() {
			DecodeF16Strided(wide, x, n, stride, nil)
			AxpyRows(dst, a, wide)
		},
		func() { axpyF16RowsGeneric(dst, a, x, stride) },
	}
	names := []string{"fused", "widened", "portable"}
	spent := make([]time.Duration, len(ways))
	for b.Loop() {
		for i, way := range ways {
			start := time.Now()
			for range reps {
				way()
			}
			spent[i] += time.Since(start)
		}
	}
	for i, name := range names {
		b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N*reps*rows), name+"-ns/row")
		if i > 0 {
			b.ReportMetric(float64(spent[0])/float64(spent[i]), "fused/"+name)
		}
	}
}

// TestStridedRowsArePerRowCalls: AxpyRowsStrided equals one Axpy per row in order and
// DotRowsStrided one Dot per row, bit for bit, for rows stride floats apart (the head of a
// cache row: strides from the row's length up), every length (the four-row and one-row
// dot kernels, the axpy chunks and the columns after them), row counts from 0 up, misaligned
// slices and every kind of data; the floats between the rows are never read (NaN there
// would show) and out is written only where asked.
func TestStridedRowsArePerRowCalls(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implAxpyRowsAVX)
		use(implMatVecAVX)
		rng := rand.New(rand.NewPCG(23, 23))
		for _, kind := range allKinds {
			for _, n := range []int{1, 7, 8, 16, 64, 72, 128, 136} {
				for _, gap := range []int{0, 1, 8, 3 * n} {
					stride := n + gap
					for _, rows := range []int{0, 1, 3, 4, 5, 9, 16} {
						off := rng.IntN(8)
						x := at(max(rows-1, 0)*stride+n, off)
						for i := range x {
							x[i] = float32(math.NaN())
						}
						var inRows []float32 // the values the rows hold, for the NaN check
						for r := range rows {
							fill(rng, kind, x[r*stride:r*stride+n])
							inRows = append(inRows, x[r*stride:r*stride+n]...)
						}
						a := make([]float32, rows)
						fill(rng, kind, a)
						q := at(n, (off+3)%8)
						fill(rng, kind, q)
						what := fmt.Sprintf("%s n=%d stride=%d rows=%d", kind, n, stride, rows)

						got := at(n, (off+5)%8)
						fill(rng, kind, got)
						want := slices.Clone(got)
						for r := range rows {
							Axpy(want, a[r], x[r*stride:r*stride+n])
						}
						AxpyRowsStrided(got, a, x, stride)
						strict := onlyDefaultNaN(inRows, a, want)
						requireSameResults(t, want, got, strict, what+" axpy")

						scores := make([]float32, rows+1)
						scores[rows] = 42
						wantScores := make([]float32, rows)
						for r := range rows {
							wantScores[r] = Dot(q, x[r*stride:r*stride+n])
						}
						DotRowsStrided(scores[:rows], q, x, stride)
						requireSameResults(t, wantScores, scores[:rows], onlyDefaultNaN(inRows, q, wantScores), what+" dot")
						require.Equal(t, float32(42), scores[rows], what)
					}
				}
			}
		}
		require.Panics(t, func() { DotRowsStrided(make([]float32, 2), make([]float32, 8), make([]float32, 15), 8) })
		require.Panics(t, func() { DotRowsStrided(make([]float32, 1), make([]float32, 8), make([]float32, 8), 7) })
		require.Panics(t, func() { AxpyRowsStrided(make([]float32, 8), make([]float32, 3), make([]float32, 8*2+7), 8) })
	})
}

// TestDotF16RowsStridedIsDotF16PerRow: DotF16RowsStrided equals its portable twin and one
// DotF16 per row, bit for bit, at every level, for F16 rows stride bytes apart with NaN halves between them
// (a kernel that read them would show it), every length (the four-row kernel and the
// rows after it), misaligned rows and every kind of half; short strides and buffers panic.
func TestDotF16RowsStridedIsDotF16PerRow(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implF16AVX2)
		rng := rand.New(rand.NewPCG(24, 24))
		for _, kind := range []halfKind{halfNormal, halfExtreme, halfSub} {
			for _, n := range []int{1, 8, 24, 64, 72} {
				for _, gap := range []int{0, 2, 16, 6 * n} {
					stride := 2*n + gap
					for _, rows := range []int{0, 1, 4, 5, 9} {
						w := byteBuf(max(rows-1, 0)*stride+2*n, 1+rng.IntN(3))
						for i := 0; i+1 < len(w); i += 2 {
							putLE16(w[i:], 0x7e00) // a NaN wherever no row is
						}
						for r := range rows {
							fillRow(rng, rowKinds[0], kind, w[r*stride:r*stride+2*n], n)
						}
						x := make([]float32, n)
						fill(rng, kindNormal, x)
						perRow := make([]float32, rows)
						for r := range rows {
							perRow[r] = DotF16(x, w[r*stride:r*stride+2*n])
						}
						want := make([]float32, rows) // the portable twin
						dotF16RowsStridedGeneric(want, x, w, stride)
						got := make([]float32, rows+1)
						got[rows] = 42
						DotF16RowsStrided(got[:rows], x, w, stride)
						what := fmt.Sprintf("%s n=%d stride=%d rows=%d", kind, n, stride, rows)
						requireSameResults(t, want, got[:rows], false, what)
						requireSameResults(t, perRow, got[:rows], false, what+" (per row)")
						require.Equal(t, float32(42), got[rows], what)
					}
				}
			}
		}
		require.Panics(t, func() { DotF16RowsStrided(make([]float32, 1), make([]float32, 8), make([]byte, 16), 15) })
		require.Panics(t, func() { DotF16RowsStrided(make([]float32, 2), make([]float32, 8), make([]byte, 31), 16) })
	})
}

// TestAxpyF16RowsStridedIsDecodeThenAxpyRows: AxpyF16RowsStrided equals widening the rows
// with DecodeF16Strided and adding them with AxpyRows (one Axpy per row in order), bit for
// bit, at every kernel level: row lengths with and without a tail of fewer than eight, the
// chunks of 64, strides longer than a row, odd addresses, every kind of weight and halves of
// every bit pattern (NaN payloads excepted where the inputs hold them); short rows panic.
func TestAxpyF16RowsStridedIsDecodeThenAxpyRows(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implAxpyF16AVX2)
		rng := rand.New(rand.NewPCG(23, 23))
		for _, kind := range allKinds {
			for _, n := range []int{1, 7, 8, 9, 16, 63, 64, 65, 72, 128, 136, 200} {
				for _, extra := range []int{0, 6, 130} {
					stride := 2*n + extra
					for _, rows := range []int{0, 1, 2, 5, 17} {
						x := make([]byte, rows*stride+1)[1:] // odd address
						for i := range x {
							x[i] = byte(rng.Uint32())
						}
						x = x[:max(0, (rows-1)*stride+2*n)]
						a := make([]float32, rows)
						fill(rng, kind, a)
						got := at(n, rng.IntN(8))
						fill(rng, kind, got)
						want, plain := slices.Clone(got), slices.Clone(got)
						wide := make([]float32, rows*n)
						DecodeF16Strided(wide, x, n, stride, nil)
						AxpyRows(want, a, wide)
						axpyF16RowsGeneric(plain, a, x, stride)
						AxpyF16RowsStrided(got, a, x, stride)
						strict := onlyDefaultNaN(a, wide, want)
						what := fmt.Sprintf("%s n=%d stride=%d rows=%d", kind, n, stride, rows)
						requireSameResults(t, want, plain, strict, what+" (portable)")
						requireSameResults(t, want, got, strict, what)
					}
				}
			}
		}
		require.Panics(t, func() { AxpyF16RowsStrided(make([]float32, 8), []float32{1, 2}, make([]byte, 47), 32) })
		require.Panics(t, func() { AxpyF16RowsStrided(make([]float32, 8), []float32{1, 2}, make([]byte, 64), 15) })
	})
}
