package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// legacyTestFormats are the legacy formats with the offsets of their fp16 fields.
var legacyTestFormats = []struct {
	f      *legacyFormat
	halves []int
}{
	{&lQ4_0, []int{0}},
	{&lQ4_1, []int{0, 2}},
	{&lQ5_0, []int{0}},
	{&lQ5_1, []int{0, 2}},
}

// TestDotLegacyRowsMatchGeneric: the legacy *Rows kernels, on every path this build has,
// give the portable definition bit for bit (NaN bits aside), for every format, rows with
// extreme scales and mins (fp16 Inf, NaN, subnormal, largest) and codes, inputs of every
// kind (non-finite blocks included), odd block counts (the last block alone), misaligned
// rows and row counts that leave 0 to 3 rows after the four-row runs; they leave the rest
// of out alone.
func TestDotLegacyRowsMatchGeneric(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implLegacyQ8VNNI)
		use(implLegacyQ8AVX2)
		checkDotLegacyRows(t)
	})
}

func checkDotLegacyRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 0))
	for _, lf := range legacyTestFormats {
		f := lf.f
		for _, nb := range []int{1, 2, 3, 7, 64, 65} {
			n := nb * QBlockLen
			for _, rows := range []int{1, 3, 4, 5, 8, 11} {
				for _, kind := range []halfKind{halfNormal, halfExtreme, halfSub, halfBits} {
					for _, xk := range []dataKind{kindNormal, kindWide, kindMixed, kindSubnormal} {
						x := make([]float32, n)
						fill(rng, xk, x)
						var v Q8Input
						v.Quantize(x)
						rb := nb * f.blockBytes
						w := byteBuf(rows*rb, 1+rng.IntN(3))
						fillKRow(rng, f.blockBytes, lf.halves, kind, w, rows*nb)
						want := make([]float32, rows)
						legacyRowsGeneric(f, want, &v, w, rb)
						out := make([]float32, rows+1)
						out[rows] = 42
						dotLegacyRows(f, out[:rows], &v, w)
						what := fmt.Sprintf("%s nb=%d rows=%d scales=%s x=%s", f.name, nb, rows, kind, xk)
						requireSameResults(t, want, out[:rows], false, what)
						require.Equal(t, float32(42), out[rows], what)
					}
				}
			}
		}
	}
}

// TestDotLegacyRowsPanics: a short weight buffer panics instead of reading past it, and an
// empty input gives zeros.
func TestDotLegacyRowsPanics(t *testing.T) {
	var v Q8Input
	v.Quantize(make([]float32, 2*QBlockLen))
	require.Panics(t, func() { DotQ4_0Q8Rows(make([]float32, 4), &v, make([]byte, 8*Q4_0BlockBytes-1)) })
	require.Panics(t, func() { DotQ5_1Q8Rows(make([]float32, 1), &v, make([]byte, Q5_1BlockBytes)) })
	v.Quantize(nil)
	out := []float32{1, 2}
	DotQ4_1Q8Rows(out, &v, nil)
	require.Equal(t, []float32{0, 0}, out)
}

// BenchmarkDotLegacyRows is BenchmarkDotKRows for the legacy formats; cpu-ns/op is the
// benchmark thread's CPU time, steadier than the wall clock on a loaded machine.
func BenchmarkDotLegacyRows(b *testing.B) {
	const cols = 2048
	rng := rand.New(rand.NewPCG(16, 18))
	var v Q8Input
	v.Quantize(randomFloats(cols, 18))
	for _, lf := range legacyTestFormats {
		for _, size := range []struct {
			name string
			rows int
		}{{"l2", 512}, {"mem", 16384}} {
			rb := cols / QBlockLen * lf.f.blockBytes
			w := make([]byte, size.rows*rb)
			fillKRow(rng, lf.f.blockBytes, lf.halves, halfNormal, w, size.rows*cols/QBlockLen)
			out := make([]float32, size.rows)
			for _, level := range testLevels() {
				b.Run(lf.f.name+"/"+size.name+"/"+level, func(b *testing.B) {
					defer atLevel(level)()
					b.SetBytes(int64(len(w)))
					cpuLoop(b, 0, func() { dotLegacyRows(lf.f, out, &v, w) })
				})
			}
		}
	}
}
