package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// kBatchFormats are the formats with batched kernels.
var kBatchFormats = map[*kFormat]func(out []float32, stride int, x *Q8KBatch, w []byte, rows int){
	&kQ2_K: DotQ2_KBatch, &kQ3_K: DotQ3_KBatch, &kQ4_K: DotQ4_KBatch, &kQ5_K: DotQ5_KBatch, &kQ6_K: DotQ6_KBatch,
}

// TestDotKBatchMatchesGeneric: the batched products, on every path this build has, give
// every vector's portable row dots bit for bit (NaN bits aside): every format, batches that
// fill one tile, part of one, and more than one (and for AVX2 whole octs of eight vectors,
// a last quad of four, and leftovers; with VNNI also whole tiles followed by vectors in
// the AVX2 kernels: 16+4+2, 16+4+3 and 16+8 where ZMM is split in halves, and by a partial
// tile: 16+9, and 16+7 and 16+8 and a lone 7 or 8 where it is full width), row counts that leave 0 to
// 3 rows after the four-row groups, extreme scales and codes, inputs of every kind;
// outputs beside the ones written stay untouched.
func TestDotKBatchMatchesGeneric(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implKBatchVNNI)
		checkDotKBatch(t)
	})
}

func checkDotKBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 0))
	for _, kf := range kTestFormats {
		f, batch := kf.f, kBatchFormats[kf.f]
		for _, nb := range []int{1, 3, 8} {
			n := nb * KBlockLen
			for _, count := range []int{1, 2, 3, 5, 6, 7, 8, 12, 16, 17, 22, 23, 24, 25, 35} {
				for _, rows := range []int{1, 4, 7} {
					kind := []halfKind{halfNormal, halfExtreme, halfSub, halfBits}[rng.IntN(4)]
					xk := []dataKind{kindNormal, kindWide, kindMixed, kindSubnormal}[rng.IntN(4)]
					xs := make([]*Q8KInput, count)
					for v := range xs {
						x := make([]float32, n)
						fill(rng, xk, x)
						xs[v] = new(Q8KInput)
						xs[v].Quantize(x)
					}
					var b Q8KBatch
					b.Set(xs)
					rb := nb * f.blockBytes
					w := byteBuf(rows*rb, rng.IntN(3))
					fillKRow(rng, f.blockBytes, kf.halves, kind, w, rows*nb)
					stride := rows + 3
					out := make([]float32, count*stride)
					for i := range out {
						out[i] = 42
					}
					batch(out, stride, &b, w, rows)
					what := fmt.Sprintf("%s nb=%d vectors=%d rows=%d scales=%s x=%s", f.name, nb, count, rows, kind, xk)
					for v := range count {
						want := make([]float32, rows)
						kRowsGeneric(f, want, xs[v], w, rb)
						requireSameResults(t, want, out[v*stride:v*stride+rows], false, fmt.Sprintf("%s vector %d", what, v))
						for i := rows; i < stride && v*stride+i < len(out); i++ {
							require.Equal(t, float32(42), out[v*stride+i], "%s vector %d: output %d written", what, v, i)
						}
					}
				}
			}
		}
	}
}

// TestTiledVectors: with the VNNI kernels, whole tiles go in tiles and the vectors past
// them only when they are at least tileMinLanes, 7 where ZMM is full width and 9 elsewhere
// (the others go to the AVX2 kernels, laid out in octs); without them, no vector is tiled.
func TestTiledVectors(t *testing.T) {
	want := map[int]int{3: 0, 6: 0, 7: 0, 8: 0, 9: 9, 16: 16, 22: 16, 23: 16, 24: 16, 25: 25}
	if zmmFullWidth {
		want = map[int]int{3: 0, 6: 0, 7: 7, 8: 8, 9: 9, 16: 16, 22: 16, 23: 23, 24: 24, 25: 25}
	}
	forEachLevel(t, func(t *testing.T) {
		use(implKBatchVNNI)
		var xs []*Q8KInput
		for range 25 {
			x := new(Q8KInput)
			x.Quantize(make([]float32, KBlockLen))
			xs = append(xs, x)
		}
		for count, tiled := range want {
			if !kBatchFast() {
				tiled = 0
			}
			var b Q8KBatch
			b.Set(xs[:count])
			require.Equal(t, tiled, b.tiled, "%d vectors", count)
			octs := 0
			if kBatchOcts() {
				octs = ((count-tiled)/4 + 1) / 2 * 8 * q8KStride
			}
			require.Len(t, b.octs, octs, "%d vectors", count)
		}
	})
}

// TestDotKBatchExtremeSums: vectors whose codes are all −127 or 127 (block sums of
// ±2032, the 32-value sums ±4064 that Q4_K and Q5_K meet as int16 pairs), with vectors
// of mixed sign beside them, against rows whose scale and min bytes are all 0xff (6-bit
// scales and mins of 63) and whose codes are all set: every format gives every vector's
// portable row dots, at every level.
func TestDotKBatchExtremeSums(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implKBatchVNNI)
		const nb, rows = 2, 5
		n := nb * KBlockLen
		xs := make([]*Q8KInput, 16)
		for v := range xs {
			x := make([]float32, n)
			for i := range x {
				switch v % 3 {
				case 0:
					x[i] = 1 // all codes −127 (iscale = −127/max)
				case 1:
					x[i] = -1 // all 127 but the first (iscale = −127/x[0])
					x[0] = 1
				default:
					x[i] = float32(i%7) - 3
				}
			}
			xs[v] = new(Q8KInput)
			xs[v].Quantize(x)
		}
		require.Equal(t, int32(-2032), q8KSum(xs[0].block(0), 0))
		require.Equal(t, int32(2032), q8KSum(xs[1].block(0), 15))
		var b Q8KBatch
		b.Set(xs)
		for _, kf := range kTestFormats {
			f := kf.f
			rb := nb * f.blockBytes
			w := make([]byte, rows*rb)
			for i := range w {
				w[i] = 0xff
			}
			for blk := range rows * nb {
				for _, off := range kf.halves {
					putLE16(w[blk*f.blockBytes+off:], 0x2c00) // 1/16
				}
			}
			requireBatchIsRowDots(t, f, &b, w, rows)
		}
	})
}

// requireBatchIsRowDots runs the batched product of format f (rows rows in w) on b and
// requires every vector's portable row dots, bit for bit.
func requireBatchIsRowDots(t *testing.T, f *kFormat, b *Q8KBatch, w []byte, rows int) {
	t.Helper()
	out := make([]float32, b.Count()*rows)
	kBatchFormats[f](out, rows, b, w, rows)
	for v, x := range b.xs {
		want := make([]float32, rows)
		kRowsGeneric(f, want, x, w, len(w)/rows)
		requireSameResults(t, want, out[v*rows:(v+1)*rows], false, fmt.Sprintf("%s vector %d", f.name, v))
	}
}

// TestDotKBatchPanelsMatchGeneric: products of more rows than one panel of the AVX2 path
// (batchPanelBytes: 256 KiB of rows, 156 to 227 of these) against two groups of four
// vectors and one left over give every vector's portable row dots, at every level.
func TestDotKBatchPanelsMatchGeneric(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implKBatchVNNI)
		rng := rand.New(rand.NewPCG(46, 0))
		const nb, rows, count = 8, 400, 9
		xs := make([]*Q8KInput, count)
		for v := range xs {
			x := make([]float32, nb*KBlockLen)
			fill(rng, kindNormal, x)
			xs[v] = new(Q8KInput)
			xs[v].Quantize(x)
		}
		var b Q8KBatch
		b.Set(xs)
		for _, kf := range kTestFormats {
			f := kf.f
			rb := nb * f.blockBytes
			w := make([]byte, rows*rb)
			fillKRow(rng, f.blockBytes, kf.halves, halfNormal, w, rows*nb)
			requireBatchIsRowDots(t, f, &b, w, rows)
		}
	})
}

// TestDotKBatchPanics: short rows or outputs panic; vectors of different lengths are refused.
func TestDotKBatchPanics(t *testing.T) {
	var a, c Q8KInput
	a.Quantize(make([]float32, KBlockLen))
	c.Quantize(make([]float32, 2*KBlockLen))
	var b Q8KBatch
	require.Panics(t, func() { b.Set([]*Q8KInput{&a, &c}) })
	b.Set([]*Q8KInput{&a, &a})
	require.Panics(t, func() { DotQ4_KBatch(make([]float32, 8), 4, &b, make([]byte, 4*Q4_KBlockBytes-1), 4) })
	require.Panics(t, func() { DotQ4_KBatch(make([]float32, 7), 4, &b, make([]byte, 4*Q4_KBlockBytes), 4) })
	require.Panics(t, func() { DotQ4_KBatch(make([]float32, 8), 3, &b, make([]byte, 4*Q4_KBlockBytes), 4) })
}

// BenchmarkDotKBatch multiplies 512 rows of 2048 columns (L2-resident) by 16 vectors
// ("batch16", a batched decode step), 4096 Q4_K or Q6_K rows (a thread's share of a
// TinyLlama-shape gate and up projection, 4.5 or 6.7 MB) by 64 ("prefill"), and two sets
// of 32768 Q4_K rows (37.7 MB each, taken in turn, so that the rows come from main memory
// as in a decode step) by 16 ("batch16mem", the fast paths only), per format and path;
// throughput counts the weight bytes times the vectors.
func BenchmarkDotKBatch(b *testing.B) {
	const cols = 2048
	for _, shape := range []struct {
		name        string
		rows, count int
	}{{"batch16", 512, 16}, {"prefill", 4096, 64}, {"batch16mem", 32768, 16}} {
		rng := rand.New(rand.NewPCG(16, 19))
		xs := make([]*Q8KInput, shape.count)
		for v := range xs {
			xs[v] = new(Q8KInput)
			xs[v].Quantize(randomFloats(cols, uint64(20+v)))
		}
		for _, kf := range kTestFormats {
			if shape.name == "prefill" && kf.f != &kQ4_K && kf.f != &kQ6_K || shape.name == "batch16mem" && kf.f != &kQ4_K {
				continue
			}
			rows := shape.rows
			rb := cols / KBlockLen * kf.f.blockBytes
			ws := make([][]byte, 1, 2)
			if shape.name == "batch16mem" {
				ws = ws[:2]
			}
			for i := range ws {
				ws[i] = make([]byte, rows*rb)
				fillKRow(rng, kf.f.blockBytes, kf.halves, halfNormal, ws[i], rows*cols/KBlockLen)
			}
			out := make([]float32, shape.count*rows)
			for _, level := range testLevels() {
				if shape.name == "batch16mem" && level != "avx512" && level != "avx2" {
					continue
				}
				b.Run(shape.name+"/"+kf.f.name+"/"+level, func(b *testing.B) {
					defer atLevel(level)()
					var x Q8KBatch
					x.Set(xs)
					b.SetBytes(int64(rows * rb * shape.count))
					i := 0
					for b.Loop() {
						kBatchFormats[kf.f](out, rows, &x, ws[i%len(ws)], rows)
						i++
					}
				})
			}
		}
	}
}
