//go:build !purego

package kernels

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// guardedFloats returns a slice of n floats that ends exactly where an inaccessible page
// begins (atEnd) or starts exactly where one ends (!atEnd), so that a kernel reading one
// float outside the slice faults and kills the test.
func guardedFloats(t *testing.T, n int, atEnd bool) []float32 {
	t.Helper()
	page := syscall.Getpagesize()
	require.LessOrEqual(t, 4*n, page, "guardedFloats: %d floats do not fit in a page", n)
	mem, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	require.NoError(t, syscall.Mprotect(mem[:page], syscall.PROT_NONE))
	require.NoError(t, syscall.Mprotect(mem[2*page:], syscall.PROT_NONE))
	start := page
	if atEnd {
		start = 2*page - 4*n
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&mem[start])), n)
}

// TestFastKernelsStayInBounds: the assembly reads and writes nothing outside its slices
// (the masked tail loads in particular), checked with guard pages on both sides.
func TestFastKernelsStayInBounds(t *testing.T) {
	sets, reason := fastKernelSets()
	if len(sets) == 0 {
		t.Skip(reason)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	for _, set := range sets {
		for n := 1; n <= 41; n++ {
			for _, atEnd := range []bool{true, false} {
				x, y := guardedFloats(t, n, atEnd), guardedFloats(t, n, !atEnd)
				fill(rng, kindNormal, x)
				fill(rng, kindNormal, y)
				require.Equal(t, dotGeneric(x, y), set.dot(x, y), "dot n=%d", n)

				dst := guardedFloats(t, n, atEnd)
				fill(rng, kindNormal, dst)
				want := slices.Clone(dst)
				axpyGeneric(want, 0.5, x)
				set.axpy(dst, 0.5, x)
				require.Equal(t, want, dst, "axpy n=%d", n)

				// rows × cols weights and batch × cols inputs, each against a guard page.
				const rows, batch = 5, 7 // a 4-row block with 4-, 2- and 1-vector groups, and a single row
				cols := n
				if rows*cols*4 > syscall.Getpagesize() {
					continue
				}
				w := guardedFloats(t, rows*cols, atEnd)
				in := guardedFloats(t, batch*cols, !atEnd)
				out := guardedFloats(t, batch*rows, atEnd)
				fill(rng, kindNormal, w)
				fill(rng, kindNormal, in)
				wantOut := make([]float32, batch*rows)
				matMulRowsGeneric(wantOut, w, in, rows, cols, batch, 0, rows)
				set.matMulRows(out, w, in, rows, cols, batch, 0, rows)
				require.Equal(t, wantOut, []float32(out), "matMulRows cols=%d", cols)
				// One input: a quarter of one row each (the quarter walk) and a row left over.
				out1 := guardedFloats(t, rows, !atEnd)
				want1 := make([]float32, rows)
				matMulRowsGeneric(want1, w, in, rows, cols, 1, 0, rows)
				set.matMulRows(out1, w, in[:cols], rows, cols, 1, 0, rows)
				require.Equal(t, want1, []float32(out1), "matMulRows batch=1 cols=%d", cols)
			}
		}
	}
}
