//go:build !purego

package kernels

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// guardedCopy returns a copy of s in memory that ends exactly where an inaccessible page
// begins (atEnd) or starts exactly where one ends.
func guardedCopy[T any](t *testing.T, s []T, atEnd bool) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	b := guardedBytes(t, len(s)*size, atEnd)
	out := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(s))
	copy(out, s)
	return out
}

// TestQuantizedRowDotsStayInBounds: the k-quant and legacy row kernels read nothing
// outside the rows and the quantized input (the masked loads of an odd last block in
// particular), and write nothing outside out, checked with guard pages on both sides of
// each.
func TestQuantizedRowDotsStayInBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 42))
	forEachLevel(t, func(t *testing.T) {
		checkQuantizedRowDotsStayInBounds(t, rng, t.Name())
	})
}

func checkQuantizedRowDotsStayInBounds(t *testing.T, rng *rand.Rand, pathName string) {
	const rows = 5 // a four-row block and a single row
	{
		for _, atEnd := range []bool{true, false} {
			x := make([]float32, 2*KBlockLen)
			fill(rng, kindNormal, x)
			var kv Q8KInput
			kv.Quantize(x[:KBlockLen])
			kv.blocks = guardedCopy(t, kv.blocks, atEnd)
			for _, kf := range kTestFormats {
				rb := kf.f.blockBytes
				w := guardedBytes(t, rows*rb, !atEnd)
				fillKRow(rng, rb, kf.halves, halfNormal, w, rows)
				out := guardedFloats(t, rows, atEnd)
				want := make([]float32, rows)
				kRowsGeneric(kf.f, want, &kv, w, rb)
				dotKRows(kf.f, out, &kv, w)
				require.Equal(t, want, []float32(out), "%s %s", pathName, kf.f.name)
			}
			for _, nb := range []int{1, 2, 3} {
				var v Q8Input
				v.Quantize(x[:nb*QBlockLen])
				v.qs = guardedCopy(t, v.qs, atEnd)
				v.corr = guardedCopy(t, v.corr, !atEnd)
				v.dLanes = guardedCopy(t, v.dLanes, atEnd)
				v.sLanes = guardedCopy(t, v.sLanes, !atEnd)
				for _, lf := range legacyTestFormats {
					rb := nb * lf.f.blockBytes
					w := guardedBytes(t, rows*rb, !atEnd)
					fillKRow(rng, lf.f.blockBytes, lf.halves, halfNormal, w, rows*nb)
					out := guardedFloats(t, rows, atEnd)
					want := make([]float32, rows)
					legacyRowsGeneric(lf.f, want, &v, w, rb)
					dotLegacyRows(lf.f, out, &v, w)
					require.Equal(t, want, []float32(out), "%s %s nb=%d", pathName, lf.f.name, nb)
				}
			}
		}
	}
}
