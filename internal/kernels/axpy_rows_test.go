package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAxpyRowsIsAxpyPerRow: AxpyRows equals one Axpy per row in order, bit for bit (NaN
// bits excepted when the inputs hold NaNs other than the default one), for every length
// (the chunks of 64 and 8 columns and the columns after them), row counts from 0 up,
// misaligned slices, and every kind of data; rows of x longer than dst are not involved.
func TestAxpyRowsIsAxpyPerRow(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implAxpyRowsAVX)
		rng := rand.New(rand.NewPCG(21, 21))
		for _, kind := range allKinds {
			for _, n := range append(testLengths, 72, 128, 136, 200) {
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
					axpyRowsGeneric(plain, a, x[:rows*n])
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
				axpyRowsGeneric(ref[dstAt:dstAt+n], a, ref[:3*n])
				requireSameResults(t, ref, buf, true, fmt.Sprintf("n=%d dst at %d", n, dstAt))
			}
		}
		assert.Panics(t, func() { AxpyRows(make([]float32, 8), make([]float32, 3), make([]float32, 23)) })
		assert.NotPanics(t, func() { AxpyRows(nil, make([]float32, 3), nil) })
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
