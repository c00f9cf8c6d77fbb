package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/half"
)

// kTestFormats are the k-quant formats with the offsets of their fp16 fields.
var kTestFormats = []struct {
	f      *kFormat
	halves []int
}{
	{&kQ2_K, []int{80, 82}},
	{&kQ3_K, []int{108}},
	{&kQ4_K, []int{0, 2}},
	{&kQ5_K, []int{0, 2}},
	{&kQ6_K, []int{208}},
}

// fillKRow writes nb random super-blocks of a k-quant format: random codes and scales
// (for halfExtreme, the extreme bytes 0x00, 0xff, 0x80, 0x7f more often) and fp16 fields
// of the kind.
func fillKRow(rng *rand.Rand, blockBytes int, halves []int, kind halfKind, row []byte, nb int) {
	for b := range nb {
		blk := row[b*blockBytes : (b+1)*blockBytes]
		for j := range blk {
			blk[j] = byte(rng.Uint32())
			if kind == halfExtreme && rng.IntN(3) == 0 {
				blk[j] = []byte{0x80, 0x7f, 0x00, 0xff, 0xf0, 0x0f}[rng.IntN(6)]
			}
		}
		for _, off := range halves {
			putLE16(blk[off:], halfPattern(rng, kind, "f16", 1.0/64))
		}
	}
}

// TestQ8KInputQuantize: ggml's quantize_row_q8_K_ref on hand-made super-blocks: the
// first value of largest magnitude (here 127, before −127) becomes −127, ties of iscale·x
// round to even,
// the block sums, d = 1/iscale; an all-zero super-block; an infinity (iscale −0, d −Inf,
// codes 0).
func TestQ8KInputQuantize(t *testing.T) {
	x := make([]float32, 3*KBlockLen)
	// Super-block 0: max = 127, so iscale = −1 and the codes are the negated values
	// rounded half to even.
	copy(x, []float32{127, 2.5, 3.5, -2.5, 0.5, 1.5, -126.6, -127})
	x[16] = 10
	// Super-block 2: +Inf.
	x[2*KBlockLen+3], x[2*KBlockLen+4] = float32(math.Inf(1)), 7
	var v Q8KInput
	v.Quantize(x)
	require.Equal(t, 3*KBlockLen, v.Len())
	b0 := v.block(0)
	want := []int8{-127, -2, -4, 2, 0, -2, 127, 127}
	for j, w := range want {
		require.Equal(t, w, int8(b0[j]), "code %d", j)
	}
	require.Equal(t, int32(-127-2-4+2+0-2+127+127), q8KSum(b0, 0))
	require.Equal(t, int32(-10), q8KSum(b0, 1))
	require.Equal(t, float32(-1), q8KScale(b0))
	b1 := v.block(1)
	for j := range b1 {
		require.Zero(t, b1[j], "zero super-block byte %d", j)
	}
	b2 := v.block(2)
	for j := range KBlockLen {
		require.Zero(t, b2[j], "infinite super-block code %d", j)
	}
	require.True(t, math.IsInf(float64(q8KScale(b2)), -1), "d = 1/−0")

	v.Quantize(x[:KBlockLen])
	require.Equal(t, KBlockLen, v.Len())
	require.Len(t, v.blocks, q8KStride)
	require.PanicsWithValue(t, "kernels: Q8KInput.Quantize: a vector of 32 values is not a whole number of 256-value super-blocks", func() {
		v.Quantize(make([]float32, 32))
	})
}

// TestDotKRowsMatchGeneric: the k-quant *Rows kernels, on every path this build has, give
// the portable definition bit for bit (NaN bits aside), for every format, rows with
// extreme scales (fp16 Inf, NaN, subnormal, largest) and codes, inputs of every kind,
// misaligned rows and row counts that leave 0 to 3 rows after the four-row runs; they
// leave the rest of out alone.
func TestDotKRowsMatchGeneric(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implKRowsVNNI)
		use(implKRowsAVX2)
		checkDotKRows(t)
	})
}

func checkDotKRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 0))
	for _, kf := range kTestFormats {
		f := kf.f
		for _, nb := range []int{1, 2, 3, 8, 22} {
			n := nb * KBlockLen
			for _, rows := range []int{1, 3, 4, 5, 8, 11} {
				for _, kind := range []halfKind{halfNormal, halfExtreme, halfSub, halfBits} {
					for _, xk := range []dataKind{kindNormal, kindWide, kindMixed, kindSubnormal} {
						x := make([]float32, n)
						fill(rng, xk, x)
						var v Q8KInput
						v.Quantize(x)
						rb := nb * f.blockBytes
						w := byteBuf(rows*rb, 1+rng.IntN(3))
						fillKRow(rng, f.blockBytes, kf.halves, kind, w, rows*nb)
						want := make([]float32, rows)
						kRowsGeneric(f, want, &v, w, rb)
						out := make([]float32, rows+1)
						out[rows] = 42
						dotKRows(f, out[:rows], &v, w)
						what := fmt.Sprintf("%s nb=%d rows=%d scales=%s x=%s", f.name, nb, rows, kind, xk)
						requireSameResults(t, want, out[:rows], false, what)
						require.Equal(t, float32(42), out[rows], what)
					}
				}
			}
		}
	}
}

// TestDotKRowsPanics: a short weight buffer panics instead of reading past it, and an
// empty input gives zeros.
func TestDotKRowsPanics(t *testing.T) {
	var v Q8KInput
	v.Quantize(make([]float32, 2*KBlockLen))
	require.Panics(t, func() { DotQ4_KRows(make([]float32, 4), &v, make([]byte, 8*Q4_KBlockBytes-1)) })
	require.Panics(t, func() { DotQ6_KRows(make([]float32, 1), &v, make([]byte, Q6_KBlockBytes)) })
	v.Quantize(nil)
	out := []float32{1, 2}
	DotQ2_KRows(out, &v, nil)
	require.Equal(t, []float32{0, 0}, out)
}

// BenchmarkDotKRows multiplies a k-quant matrix by one quantized vector: "l2" is 2048
// columns × 512 rows (mostly cache-resident, so the arithmetic shows), "mem" 2048 × 16384
// (streamed from memory), on every path this CPU has. Throughput is bytes of weights read
// per second; "quantize/LEVEL" is the cost of preparing the input, once per product.
func BenchmarkDotKRows(b *testing.B) {
	const cols = 2048
	rng := rand.New(rand.NewPCG(16, 17))
	x := randomFloats(cols, 17)
	var v Q8KInput
	for _, level := range testLevels() {
		b.Run("quantize/"+level, func(b *testing.B) {
			defer atLevel(level)()
			b.SetBytes(4 * cols)
			for b.Loop() {
				v.Quantize(x)
			}
		})
	}
	v.Quantize(x)
	for _, kf := range kTestFormats {
		for _, size := range []struct {
			name string
			rows int
		}{{"l2", 512}, {"mem", 16384}} {
			rb := cols / KBlockLen * kf.f.blockBytes
			w := make([]byte, size.rows*rb)
			fillKRow(rng, kf.f.blockBytes, kf.halves, halfNormal, w, size.rows*cols/KBlockLen)
			out := make([]float32, size.rows)
			for _, level := range testLevels() {
				b.Run(kf.f.name+"/"+size.name+"/"+level, func(b *testing.B) {
					defer atLevel(level)()
					b.SetBytes(int64(len(w)))
					for b.Loop() {
						dotKRows(kf.f, out, &v, w)
					}
				})
			}
		}
	}
}

// TestQ8KInputQuantizeMatchesGeneric: Quantize at every level (AVX-512 assembly where the
// CPU has VNNI, AVX2 assembly where it has AVX2) writes exactly what the portable definition
// writes, for inputs of
// every kind: ordinary, huge, tiny and subnormal (iscale overflows), with infinities, NaNs
// of several payloads and negative zeros, exact ties of iscale·x, and super-blocks whose
// largest magnitude occurs with both signs.
func TestQ8KInputQuantizeMatchesGeneric(t *testing.T) {
	forEachLevel(t, checkQ8KInputQuantize)
}

func checkQ8KInputQuantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 0))
	kinds := []dataKind{kindNormal, kindWide, kindNearOverflow, kindSubnormal, kindSpecial, kindMixed, kindCancel, kindNegZero, kindNaNPayloads}
	for _, kind := range kinds {
		for _, nb := range []int{1, 2, 7} {
			for _, scale := range []float32{1, 1e-38, 1e30, 127} {
				x := make([]float32, nb*KBlockLen)
				fill(rng, kind, x)
				for i := range x {
					x[i] *= scale
					if scale == 127 { // integers and halves: ties of iscale·x
						x[i] = float32(math.Round(float64(x[i])*2) / 2)
					}
				}
				if kind == kindNormal && nb > 1 { // the largest magnitude twice, with both signs
					x[KBlockLen+9], x[KBlockLen+200] = -1000, 1000
				}
				requireQ8KQuantizeMatches(t, x, fmt.Sprintf("%s nb=%d scale=%g", kind, nb, scale))
			}
		}
	}
	// The largest magnitude at every position of a super-block, each sign, once alone and
	// once tied with an earlier value of the other sign.
	x := make([]float32, KBlockLen)
	for pos := range KBlockLen {
		for _, v := range []float32{50, -50} {
			fill(rng, kindNormal, x)
			x[pos] = v
			requireQ8KQuantizeMatches(t, x, fmt.Sprintf("max %g at %d", v, pos))
			x[(pos+KBlockLen-1)%KBlockLen] = -v
			requireQ8KQuantizeMatches(t, x, fmt.Sprintf("max %g at %d, tied", v, pos))
		}
	}
}

// requireQ8KQuantizeMatches quantizes x on this build's path and with the portable
// definition and requires the same bytes.
func requireQ8KQuantizeMatches(t *testing.T, x []float32, what string) {
	t.Helper()
	use(implQuantizeQ8KVNNI)
	var got, want Q8KInput
	got.Quantize(x)
	want.Quantize(x) // sizes the buffers
	quantizeQ8KGeneric(&want, x)
	require.Equal(t, want.blocks, got.blocks, what)
}

// TestKSumsMatchDecode: each format's integers computed from the stored bytes (the portable
// row dots' kquant_sums.go) equal kSums over the super-block decoded value by value, for
// random super-blocks (any codes and scales) and inputs; so do the stored d and dmin the
// decoder reads.
func TestKSumsMatchDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 0))
	for _, kf := range kTestFormats {
		f := kf.f
		for rep := range 200 {
			x := make([]float32, KBlockLen)
			fill(rng, []dataKind{kindNormal, kindWide, kindMixed}[rep%3], x)
			var v Q8KInput
			v.Quantize(x)
			blk := make([]byte, f.blockBytes)
			fillKRow(rng, f.blockBytes, kf.halves, []halfKind{halfNormal, halfExtreme, halfBits}[rep%3], blk, 1)
			var k kBlock
			f.decode(&k, blk)
			wantI, wantM := kSums(&k, v.block(0))
			gotI, gotM := f.sums(blk, v.block(0))
			require.Equal(t, wantI, gotI, "%s rep %d: I", f.name, rep)
			require.Equal(t, wantM, gotM, "%s rep %d: M", f.name, rep)
			require.Equal(t, k.offset, f.offset, f.name)
			require.Equal(t, math.Float32bits(k.d), math.Float32bits(half.F16ToF32(le16(blk[f.dOffset:]))), f.name)
			if f.offset == 0 {
				require.Equal(t, math.Float32bits(k.dmin), math.Float32bits(half.F16ToF32(le16(blk[f.dOffset+2:]))), f.name)
			}
		}
	}
}
