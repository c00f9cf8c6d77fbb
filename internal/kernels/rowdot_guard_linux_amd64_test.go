//go:build !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// guardedBytes returns n bytes that end exactly where an inaccessible page begins (atEnd)
// or start exactly where one ends (!atEnd), so that a kernel reading one byte outside the
// slice faults and kills the test.
func guardedBytes(t *testing.T, n int, atEnd bool) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	require.LessOrEqual(t, n, page, "guardedBytes: %d bytes do not fit in a page", n)
	mem, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	require.NoError(t, syscall.Mprotect(mem[:page], syscall.PROT_NONE))
	require.NoError(t, syscall.Mprotect(mem[2*page:], syscall.PROT_NONE))
	start := page
	if atEnd {
		start = 2*page - n
	}
	return mem[start : start+n : start+n]
}

// TestRowDotsStayInBounds: the assembly row dots read nothing outside the input vector
// and the rows (the last block, the last group of halves), and the *Rows kernels write
// nothing outside out, checked with guard pages on both sides.
func TestRowDotsStayInBounds(t *testing.T) {
	sets, reason := fastRowSets()
	if len(sets) == 0 {
		t.Skip(reason)
	}
	rng := rand.New(rand.NewPCG(21, 21))
	for _, set := range sets {
		for _, k := range rowKinds {
			var ns []int
			if k.blockLen == 1 {
				for n := 1; n <= 41; n++ {
					ns = append(ns, n)
				}
			} else {
				ns = []int{32, 64, 96}
			}
			for _, n := range ns {
				for _, atEnd := range []bool{true, false} {
					x := guardedFloats(t, n, atEnd)
					fill(rng, kindNormal, x)
					rb := k.rowBytes(n)
					row := guardedBytes(t, rb, !atEnd)
					fillRow(rng, k, halfNormal, row, n)
					require.Equal(t, k.generic(x, row), set.dot[k.name](x, row), "%s n=%d", k.name, n)

					const rows = 5 // a four-row block and a single row
					w := guardedBytes(t, rows*rb, atEnd)
					fillRow(rng, k, halfNormal, w, rows*n)
					out := guardedFloats(t, rows, !atEnd)
					want := make([]float32, rows)
					rowsGeneric(want, x, w, rb, k.generic)
					set.rows[k.name](out, x, w)
					require.Equal(t, want, []float32(out), "%s rows n=%d", k.name, n)

					// MatMulF16 and MatMulBF16 of one and two inputs on the stored rows: the
					// the quarter kernels (with the four-row ones for rows a quarter does not take).
					if h := halfFormats[k.name]; h != nil && n%8 == 0 {
						for _, batch := range []int{1, 2} {
							xs := guardedFloats(t, batch*n, atEnd)
							fill(rng, kindNormal, xs)
							outs := guardedFloats(t, batch*rows, !atEnd)
							wantOut := make([]float32, batch*rows)
							matMulHalfGeneric(wantOut, xs, w, rows, n, batch, 0, rows, h)
							halfRowsAVX2(outs, xs, w, rows, n, batch, 0, rows, h)
							require.Equal(t, wantOut, []float32(outs), "%s stored rows batch=%d n=%d", k.name, batch, n)
						}
					}
				}
			}
		}
	}
}

// halfFormats are the 16-bit row formats by rowKinds name.
var halfFormats = map[string]*halfFormat{"f16": &halfF16, "bf16": &halfBF16}

// TestHeadsStridedStayInBounds: DotF16HeadsStrided and AxpyF16HeadsStrided, with and without
// next rows to prefetch, read and write only their slices, each against a guard page on
// either side, for runs of one to three heads of 8-72 halves in rows with gaps between
// them (the prefetches may lead anywhere: they never fault).
func TestHeadsStridedStayInBounds(t *testing.T) {
	if !implF16AVX2.on || !implAxpyF16AVX2.on {
		t.Skip("needs AVX2 and F16C")
	}
	rng := rand.New(rand.NewPCG(23, 23))
	for _, heads := range []int{1, 3} {
		for _, dim := range []int{8, 64, 72} {
			for _, rows := range []int{1, 5, 9} { // a four-row block or two, and rows after them; all in a page
				for _, atEnd := range []bool{true, false} {
					stride := 2*heads*dim + 16
					span := (rows-1)*stride + 2*heads*dim
					w := guardedBytes(t, span, atEnd)
					fillRow(rng, rowKinds[0], halfNormal, w, span/2)
					next := guardedBytes(t, span, !atEnd)
					q := guardedFloats(t, heads*dim, atEnd)
					fill(rng, kindNormal, q)
					what := fmt.Sprintf("%d heads of %d, %d rows, at end %v", heads, dim, rows, atEnd)
					for _, nx := range [][]byte{nil, next} {
						out := guardedFloats(t, heads*rows, !atEnd)
						want := make([]float32, heads*rows)
						for h := range heads {
							dotF16RowsStridedGeneric(want[h*rows:(h+1)*rows], q[h*dim:(h+1)*dim], w[2*h*dim:], stride)
						}
						DotF16HeadsStrided(out, rows, q, dim, heads, dim, w, rows, stride, nx)
						require.Equal(t, want, []float32(out), what)

						a := guardedFloats(t, heads*rows, atEnd)
						fill(rng, kindNormal, a)
						dst := guardedFloats(t, heads*dim, !atEnd)
						clear(dst)
						wantSum := make([]float32, heads*dim)
						for h := range heads {
							axpyF16RowsGeneric(wantSum[h*dim:(h+1)*dim], a[h*rows:(h+1)*rows], w[2*h*dim:], stride)
						}
						AxpyF16HeadsStrided(dst, dim, a, rows, heads, dim, w, rows, stride, nx)
						require.Equal(t, wantSum, []float32(dst), what)
					}
				}
			}
		}
	}
}
