package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/kvref/kvref/internal/half"
)

// q8Kind is the Q8_0 row format, for fillRow: blocks of 32 int8 values and an fp16 scale.
// (Q8_0 rows have no float32-input row dot, so it is not one of rowKinds.)
var q8Kind = rowKind{name: "q8_0", blockLen: QBlockLen, blockBytes: Q8_0BlockBytes}

// TestQ8InputQuantize: ggml's x86 quantize_row_q8_0 on hand-made blocks: the fp16 scale
// amax/127, the multiplier 127/amax, ties rounded to even, an all-zero block, and a block
// with a NaN or an infinity (scale NaN, values 0).
func TestQ8InputQuantize(t *testing.T) {
	x := make([]float32, 4*QBlockLen)
	// Block 0: amax 127, so id = 1 and the values themselves are rounded.
	copy(x, []float32{2.5, 3.5, -2.5, -3.5, 0.5, 1.5, 127, -126.4, -126.6})
	// Block 1: all zero. Block 2: amax 1, a value at 1/3.
	x[2*QBlockLen], x[2*QBlockLen+1] = 1, float32(1.0/3)
	// Block 3: an infinity.
	x[3*QBlockLen], x[3*QBlockLen+1] = float32(math.Inf(-1)), 5

	var v Q8Input
	v.Quantize(x)
	require.Equal(t, 4*QBlockLen, v.Len())
	require.Equal(t, []int8{2, 4, -2, -4, 0, 2, 127, -126, -127, 0}, v.qs[:10])
	require.Equal(t, float32(1), v.d[0])
	require.Equal(t, make([]int8, QBlockLen), v.qs[QBlockLen:2*QBlockLen])
	require.Equal(t, float32(0), v.d[1])
	require.Equal(t, float16.Fromfloat32(float32(1)/127).Float32(), v.d[2])
	require.Equal(t, []int8{127, 42}, v.qs[2*QBlockLen:2*QBlockLen+2]) // 127/3 = 42.33
	require.True(t, math.IsNaN(float64(v.d[3])))
	require.Equal(t, make([]int8, QBlockLen), v.qs[3*QBlockLen:])
	for b := range 4 {
		for l := range 8 {
			q := v.qs[b*QBlockLen+4*l:]
			require.Equal(t, -128*(int32(q[0])+int32(q[1])+int32(q[2])+int32(q[3])), v.corr[8*b+l])
			require.Equal(t, math.Float32bits(v.d[b]), math.Float32bits(v.dLanes[8*b+l]))
		}
	}

	// Reuse with a shorter vector resizes it.
	v.Quantize(x[:QBlockLen])
	require.Equal(t, QBlockLen, v.Len())
	require.Len(t, v.d, 1)
	require.PanicsWithValue(t, "kernels: Q8Input.Quantize: a vector of 33 values is not a whole number of 32-value blocks", func() {
		v.Quantize(make([]float32, 33))
	})
}

// TestQ8InputRoundTrip: every value comes back within half a step of the block's scale
// (plus the fp16 rounding of the scale).
func TestQ8InputRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 0))
	x := make([]float32, 64*QBlockLen)
	fill(rng, kindNormal, x)
	var v Q8Input
	v.Quantize(x)
	for b := range len(x) / QBlockLen {
		var amax float64
		for _, f := range x[b*QBlockLen : (b+1)*QBlockLen] {
			amax = max(amax, math.Abs(float64(f)))
		}
		step := amax / 127
		for j := range QBlockLen {
			i := b*QBlockLen + j
			got := float64(v.qs[i]) * float64(v.d[b])
			require.InDelta(t, float64(x[i]), got, step/2+127*step*0x1p-11+1e-6, "value %d", i)
		}
	}
}

// TestDotQ8_0Q8IsTheQuantizedProduct: the result is Σ_b dw·dx·Σ wq·xq up to float32
// rounding, computed here in float64 from the stored bytes, so the lane bookkeeping of
// the definition cannot hide a wrong product.
func TestDotQ8_0Q8IsTheQuantizedProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 0))
	for _, nb := range []int{1, 2, 3, 7, 64} {
		n := nb * QBlockLen
		x := make([]float32, n)
		fill(rng, kindNormal, x)
		row := make([]byte, nb*Q8_0BlockBytes)
		fillRow(rng, q8Kind, halfNormal, row, n)
		var v Q8Input
		v.Quantize(x)
		var want, mag float64
		for b := range nb {
			blk := row[b*Q8_0BlockBytes:]
			s := float64(half.F16ToF32(le16(blk))) * float64(v.d[b])
			var p int64
			for j := range QBlockLen {
				p += int64(int8(blk[2+j])) * int64(v.qs[b*QBlockLen+j])
			}
			want += s * float64(p)
			mag += math.Abs(s) * 128 * 127 * QBlockLen
		}
		got := DotQ8_0Q8(&v, row)
		require.InDelta(t, want, float64(got), mag*1e-6, "nb=%d", nb)
	}
}

// TestDotQ8_0Q8RowsMatchGeneric: the *Rows form, at every level this CPU has, gives the
// portable row dot bit for bit, for rows with extreme scales (fp16 Inf, NaN, subnormal,
// largest) and codes (−128, 127), inputs of every kind, misaligned rows, and row counts
// that leave 0 to 3 rows after the four-row runs; it leaves the rest of out alone.
func TestDotQ8_0Q8RowsMatchGeneric(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implQ8Q8AVX2)
		checkDotQ8_0Q8Rows(t)
	})
}

func checkDotQ8_0Q8Rows(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 0))
	for _, nb := range []int{1, 2, 3, 7, 31, 33, 64, 129} {
		n := nb * QBlockLen
		for _, rows := range []int{1, 3, 4, 5, 8, 11, 17} {
			for _, kind := range []halfKind{halfNormal, halfExtreme, halfSub, halfBits} {
				for _, xk := range []dataKind{kindNormal, kindWide, kindMixed} {
					x := make([]float32, n)
					fill(rng, xk, x)
					var v Q8Input
					v.Quantize(x)
					rb := nb * Q8_0BlockBytes
					w := byteBuf(rows*rb, 1+rng.IntN(3))
					for r := range rows {
						fillRow(rng, q8Kind, kind, w[r*rb:(r+1)*rb], n)
					}
					want := make([]float32, rows)
					for r := range want {
						want[r] = dotQ8_0Q8Generic(&v, w[r*rb:(r+1)*rb])
					}
					out := make([]float32, rows+1)
					out[rows] = 42
					DotQ8_0Q8Rows(out[:rows], &v, w)
					what := fmt.Sprintf("nb=%d rows=%d scales=%s x=%s", nb, rows, kind, xk)
					requireSameResults(t, want, out[:rows], false, what)
					require.Equal(t, float32(42), out[rows], what)
					for r := range rows {
						require.True(t, sameResult(want[r], DotQ8_0Q8(&v, w[r*rb:(r+1)*rb]), false), what)
					}
				}
			}
		}
	}
}

// TestDotQ8_0Q8ExtremeCodes: rows of −128 and 127 codes against inputs whose codes are all
// ±127 (the AVX2 kernel's pairs of |w|·x come closest to 2^15 there, 2·128·127) give, at
// every level, the exact integer sums: each block is 32 equal products, so the float
// steps are exact too and the result is known without the portable code.
func TestDotQ8_0Q8ExtremeCodes(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implQ8Q8AVX2)
		const nb, rows = 5, 6
		x := make([]float32, nb*QBlockLen)
		for i := range x {
			x[i] = 127 // d = 1 exactly, every code 127
			if i/QBlockLen%2 == 1 {
				x[i] = -127
			}
		}
		var v Q8Input
		v.Quantize(x)
		w := make([]byte, rows*nb*Q8_0BlockBytes)
		want := make([]float32, rows)
		for r := range rows {
			code := []int8{-128, 127}[r%2]
			for b := range nb {
				blk := w[(r*nb+b)*Q8_0BlockBytes:]
				putLE16(blk, 0x3c00) // 1.0
				for j := range QBlockLen {
					blk[2+j] = byte(code)
				}
				want[r] += float32(int(code) * int(v.qs[b*QBlockLen]) * QBlockLen)
			}
		}
		out := make([]float32, rows)
		DotQ8_0Q8Rows(out, &v, w)
		require.Equal(t, want, out)
	})
}

// TestDotQ8_0Q8NonFiniteInput: an input block with an infinity or a NaN makes the product
// NaN on every path.
func TestDotQ8_0Q8NonFiniteInput(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implQ8Q8AVX2)
		checkDotQ8_0Q8NonFinite(t)
	})
}

func checkDotQ8_0Q8NonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 0))
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		x := make([]float32, 4*QBlockLen)
		fill(rng, kindNormal, x)
		x[2*QBlockLen+5] = bad
		var v Q8Input
		v.Quantize(x)
		rb := 4 * Q8_0BlockBytes
		w := make([]byte, 5*rb)
		for r := range 5 {
			fillRow(rng, q8Kind, halfNormal, w[r*rb:(r+1)*rb], len(x))
		}
		out := make([]float32, 5)
		DotQ8_0Q8Rows(out, &v, w)
		for r, o := range out {
			require.True(t, math.IsNaN(float64(o)), "row %d with input %v: %v", r, bad, o)
		}
	}
}

// TestDotQ8_0Q8RowsPanics: a short weight buffer panics instead of reading past it.
func TestDotQ8_0Q8RowsPanics(t *testing.T) {
	var v Q8Input
	v.Quantize(make([]float32, 64))
	require.Panics(t, func() { DotQ8_0Q8Rows(make([]float32, 4), &v, make([]byte, 4*68-1)) })
	require.Panics(t, func() { DotQ8_0Q8(&v, make([]byte, 67)) })
}

// BenchmarkDotQ8_0Q8Rows multiplies a Q8_0 matrix by one quantized vector: "l2" is
// 2048 × 1024 (2.2 MB, mostly cache-resident, so the arithmetic shows), "mem" 2048 × 16384
// (36 MB, streamed from memory), on every path this CPU has. Throughput is bytes of
// weights read per second; "quantize/LEVEL" is the cost of preparing the input, once per
// product (bytes of input read per second).
func BenchmarkDotQ8_0Q8Rows(b *testing.B) {
	const cols = 2048
	rng := rand.New(rand.NewPCG(16, 16))
	x := randomFloats(cols, 17)
	var v Q8Input
	v.Quantize(x)
	for _, level := range testLevels() {
		b.Run("quantize/"+level, func(b *testing.B) {
			defer atLevel(level)()
			b.SetBytes(4 * cols)
			for b.Loop() {
				v.Quantize(x)
			}
		})
	}
	for _, size := range []struct {
		name string
		rows int
	}{{"l2", 1024}, {"mem", 16384}} {
		rb := cols / QBlockLen * Q8_0BlockBytes
		w := make([]byte, size.rows*rb)
		fillRow(rng, q8Kind, halfNormal, w, size.rows*cols)
		out := make([]float32, size.rows)
		for _, level := range testLevels() {
			b.Run(size.name+"/q8input/"+level, func(b *testing.B) {
				defer atLevel(level)()
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					DotQ8_0Q8Rows(out, &v, w)
				}
			})
		}
	}
}

// TestQ8InputQuantizeMatchesGeneric: Quantize at every level (AVX-512 assembly where the
// CPU has VNNI, AVX2 assembly where it has AVX2) writes exactly what the portable
// definition writes, for inputs of every
// kind: ordinary, huge (scales that overflow fp16), tiny (scales that round to 0),
// subnormal, with infinities and NaNs, and ties of x·127/amax.
func TestQ8InputQuantizeMatchesGeneric(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implQuantizeQ8VNNI)
		checkQ8InputQuantize(t)
	})
}

func checkQ8InputQuantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 0))
	kinds := []dataKind{kindNormal, kindWide, kindNearOverflow, kindSubnormal, kindSpecial, kindMixed, kindCancel, kindNegZero, kindNaNPayloads}
	for _, kind := range kinds {
		for _, nb := range []int{1, 2, 7, 64} {
			for _, scale := range []float32{1, 1e-6, 3e-6, 1e30, 127} {
				x := make([]float32, nb*QBlockLen)
				fill(rng, kind, x)
				for i := range x {
					x[i] *= scale
					if scale == 127 { // integers and halves: ties of x·id
						x[i] = float32(math.Round(float64(x[i])*2) / 2)
					}
				}
				var got, want Q8Input
				got.Quantize(x)
				want.Quantize(x) // sizes the buffers
				quantizeBlocksGeneric(&want, x)
				what := fmt.Sprintf("%s nb=%d scale=%g", kind, nb, scale)
				require.Equal(t, want.qs, got.qs, what)
				require.Equal(t, want.corr, got.corr, what)
				for b := range nb {
					require.Equal(t, math.Float32bits(want.d[b]), math.Float32bits(got.d[b]), "%s block %d: d", what, b)
					require.Equal(t, math.Float32bits(want.amax[b]), math.Float32bits(got.amax[b]), "%s block %d: amax", what, b)
					for l := range 8 {
						require.Equal(t, math.Float32bits(want.dLanes[8*b+l]), math.Float32bits(got.dLanes[8*b+l]), "%s block %d: dLanes", what, b)
					}
				}
			}
		}
	}
}
