package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/half"
)

func TestWeightTypeNamesAndSizes(t *testing.T) {
	t.Parallel()

	tests := []struct {
		wt         WeightType
		name       string
		ggml       uint32
		blockSize  int
		blockBytes int
		row4096    int
	}{
		{WeightQ8_0, "q8_0", 8, 32, 34, 4352},
		{WeightQ4_0, "q4_0", 2, 32, 18, 2304},
		{WeightQ4_K, "q4_k", 12, 256, 144, 2304},
		{WeightQ6_K, "q6_k", 14, 256, 210, 3360},
		{WeightQ4_1, "q4_1", 3, 32, 20, 2560},
		{WeightQ5_0, "q5_0", 6, 32, 22, 2816},
		{WeightQ5_1, "q5_1", 7, 32, 24, 3072},
		{WeightQ2_K, "q2_k", 10, 256, 84, 1344},
		{WeightQ3_K, "q3_k", 11, 256, 110, 1760},
		{WeightQ5_K, "q5_k", 13, 256, 176, 2816},
	}
	require.Equal(t, len(tests), len(WeightTypes()))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.wt, WeightTypes()[i])
			require.Equal(t, tt.name, tt.wt.String())
			require.Equal(t, tt.ggml, tt.wt.GGMLType())
			require.Equal(t, tt.blockSize, tt.wt.BlockSize())
			require.Equal(t, tt.blockBytes, tt.wt.BlockBytes())
			n, err := tt.wt.RowBytes(4096)
			require.NoError(t, err)
			require.Equal(t, tt.row4096, n)
			n, err = tt.wt.RowBytes(0)
			require.NoError(t, err)
			require.Zero(t, n)
			got, ok := WeightTypeForGGML(tt.ggml)
			require.True(t, ok)
			require.Equal(t, tt.wt, got)
		})
	}
	require.Equal(t, "WeightType(19)", WeightType(19).String())
}

func TestParseWeightType(t *testing.T) {
	t.Parallel()

	for s, want := range map[string]WeightType{
		"q8_0": WeightQ8_0, "Q8_0": WeightQ8_0, "q4_0": WeightQ4_0, " Q4_0 ": WeightQ4_0,
		"q4_k": WeightQ4_K, "q4_K": WeightQ4_K, "Q4_K": WeightQ4_K,
		"q6_k": WeightQ6_K, "q6_K": WeightQ6_K, "\tQ6_K\n": WeightQ6_K,
		"q4_1": WeightQ4_1, "Q5_0": WeightQ5_0, "q5_1": WeightQ5_1, "Q2_K": WeightQ2_K, "q3_K": WeightQ3_K, "q5_k": WeightQ5_K,
	} {
		got, err := ParseWeightType(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "q8_k", "q4_k_m", "f16", "q8", "iq4_nl"} {
		_, err := ParseWeightType(s)
		require.Error(t, err, s)
		require.Contains(t, err.Error(), fmt.Sprintf("%q", s))
		require.Contains(t, err.Error(), "q8_0, q4_0, q4_k, q6_k, q4_1, q5_0, q5_1, q2_k, q3_k, q5_k")
	}
}

func TestWeightTypeForGGMLRejectsOtherTypes(t *testing.T) {
	t.Parallel()

	for _, id := range []uint32{0, 1, 4, 5, 9, 15, 16, 20, 30, 1 << 31} {
		_, ok := WeightTypeForGGML(id)
		require.False(t, ok, "ggml type %d", id)
	}
}

func TestRowBytesErrors(t *testing.T) {
	t.Parallel()

	for _, wt := range WeightTypes() {
		for _, n := range []int{-wt.BlockSize(), 1, wt.BlockSize() - 1, wt.BlockSize() + 16} {
			_, err := wt.RowBytes(n)
			require.Error(t, err, "%v n=%d", wt, n)
			require.Contains(t, err.Error(), fmt.Sprintf("multiple of %d; got %d", wt.BlockSize(), n))
		}
	}
	_, err := WeightType(10).RowBytes(256)
	require.Error(t, err)
	require.Contains(t, err.Error(), "WeightType(10) is not a weight type")
	require.PanicsWithValue(t, "quant: WeightType(17) is not a weight type; valid types are q8_0, q4_0, q4_k, q6_k, q4_1, q5_0, q5_1, q2_k, q3_k, q5_k",
		func() { WeightType(17).BlockSize() })
}

func TestWeightRowLengthsAreChecked(t *testing.T) {
	t.Parallel()

	for _, wt := range WeightTypes() {
		n := 2 * wt.BlockSize()
		rb, err := wt.RowBytes(n)
		require.NoError(t, err)
		x := make([]float32, n)
		row := make([]byte, rb)
		require.Panics(t, func() { wt.DequantizeRow(make([]float32, n+8), row) }, "%v: partial block", wt)
		require.Panics(t, func() { wt.DequantizeRow(x, row[:rb-1]) }, "%v: short src", wt)
		require.Panics(t, func() { wt.QuantizeRow(row[:rb-1], x) }, "%v: short dst", wt)
		require.Panics(t, func() { wt.QuantizeRow(row, x[:n-1]) }, "%v: partial block", wt)
		require.Panics(t, func() { wt.DotRow(x, row[:rb-1]) }, "%v: short row", wt)
		require.Panics(t, func() { wt.DotRow(x[:8], row) }, "%v: partial block", wt)

		// Extra bytes are neither read nor written.
		long := make([]byte, rb+5)
		for i := range long {
			long[i] = 0xa5
		}
		wt.QuantizeRow(long, x)
		require.Equal(t, []byte{0xa5, 0xa5, 0xa5, 0xa5, 0xa5}, long[rb:])
		require.NotPanics(t, func() { wt.DequantizeRow(x, long) })
		require.NotPanics(t, func() { wt.DotRow(x, long) })
	}
}

func TestNearestIntIsGGMLs(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		in   float32
		want int32
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0}, {0.49999997, 0}, {0.5, 0}, {1.5, 2}, {2.5, 2}, {3.5, 4},
		{-0.5, 0}, {-1.5, -2}, {-2.5, -2}, {7.4999995, 7}, {15.5, 16}, {-32.7, -33},
		{4194303, 4194303}, {-4194303, -4194303},
		// Beyond ggml's asserted range a release build returns the low mantissa bits:
		// 2^23 + 1.5·2^23 = 1.25·2^24 has mantissa 0x200000.
		{0x1p23, 0x200000 - 0x400000},
	} {
		require.Equal(t, tt.want, nearestInt(tt.in), "nearestInt(%v)", tt.in)
	}
}

func TestTruncToInt32IsX86(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		in   float32
		want int32
	}{
		{3.9, 3}, {-3.9, -3}, {16.5, 16}, {0.4999, 0}, {-0.99, 0},
		{-2147483648, math.MinInt32}, {2147483520, 2147483520},
		{2147483648, math.MinInt32}, {-2147483904, math.MinInt32},
		{float32(math.Inf(1)), math.MinInt32}, {float32(math.Inf(-1)), math.MinInt32}, {float32(math.NaN()), math.MinInt32},
	} {
		require.Equal(t, tt.want, truncToInt32(tt.in), "truncToInt32(%v)", tt.in)
	}
	require.Equal(t, float32(3), roundAway(2.5))
	require.Equal(t, float32(-3), roundAway(-2.5))
	require.Equal(t, float32(2), roundAway(2.4999998))
}

// ggmlFP32ToFP16 is ggml_compute_fp32_to_fp16 (ggml/src/ggml-impl.h), the conversion
// ggml's quantizers store their scales with, transcribed to check F32ToF16 against it.
func ggmlFP32ToFP16(f float32) uint16 {
	base := float32(float32(absf(f)*0x1p+112) * 0x1p-110) // rounded: no FMA with the sum below
	w := math.Float32bits(f)
	shl1w := w + w
	sign := w & 0x80000000
	bias := shl1w & 0xff000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = math.Float32frombits((bias>>1)+0x07800000) + base
	bits := math.Float32bits(base)
	expBits := (bits >> 13) & 0x00007c00
	mantissaBits := bits & 0x00000fff
	nonsign := expBits + mantissaBits
	if shl1w > 0xff000000 {
		nonsign = 0x7e00
	}
	return uint16(sign>>16) | uint16(nonsign)
}

// TestF32ToF16MatchesGGML checks that the scales are stored with ggml's rounding: every
// non-NaN float32 on a stride through all bit patterns, and every value within a few ulps
// of each half-way point between two fp16 values.
func TestF32ToF16MatchesGGML(t *testing.T) {
	t.Parallel()

	check := func(b uint32) {
		f := math.Float32frombits(b)
		if f != f {
			return
		}
		if got, want := half.F32ToF16(f), ggmlFP32ToFP16(f); got != want {
			// Tested before require is called: this runs for a million values.
			require.FailNowf(t, "half.F32ToF16 differs from ggml", "half.F32ToF16(%g = %#08x) = %#04x, ggml gives %#04x", f, b, got, want)
		}
	}
	for b := uint64(0); b < 1<<32; b += 4093 {
		check(uint32(b))
	}
	for h := uint32(0); h < 0x7c00; h++ {
		mid := math.Float32bits((half.F16ToF32(uint16(h)) + half.F16ToF32(uint16(h+1))) / 2)
		for d := uint32(0); d < 5; d++ {
			check(mid - 2 + d)
			check(mid - 2 + d | 1<<31)
		}
	}
}

// weightTestRow returns n values of kind: "normal" (σ = scale), "uniform" (±scale),
// "outliers" (normal, every 97th value ×40), "positive" (|normal| + scale/2) or "heavy"
// (normal³, a heavy-tailed distribution).
func weightTestRow(rng *rand.Rand, kind string, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		v := rng.NormFloat64()
		switch kind {
		case "uniform":
			v = 2*rng.Float64() - 1
		case "outliers":
			if i%97 == 13 {
				v *= 40
			}
		case "positive":
			v = math.Abs(v) + 0.5
		case "heavy":
			v = v * v * v
		}
		x[i] = float32(v * scale)
	}
	return x
}

// quantizeWeights returns x quantized as wt and the dequantized row.
func quantizeWeights(t testing.TB, wt WeightType, x []float32) ([]byte, []float32) {
	rb, err := wt.RowBytes(len(x))
	require.NoError(t, err)
	q := make([]byte, rb)
	wt.QuantizeRow(q, x)
	y := make([]float32, len(x))
	wt.DequantizeRow(y, q)
	return q, y
}

// distance returns how far v lies outside [lo, hi].
func distance(v, lo, hi float64) float64 {
	switch {
	case v < lo:
		return lo - v
	case v > hi:
		return v - hi
	}
	return 0
}

// fp16Error bounds |fp16(v) − v| for a finite fp16 result: half an ulp, 2^-11·v for a
// normal half and 2^-25 for a subnormal one.
func fp16Error(v float64) float64 { return math.Max(0x1p-11*v, 0x1p-25) }

// weightErrorBound returns the bound on |x̂_i − x_i| documented on WeightType, for element
// i of the row x stored as q.
func weightErrorBound(wt WeightType, x []float32, q []byte, i int) float64 {
	v := math.Abs(float64(x[i]))
	switch wt {
	case WeightQ8_0, WeightQ4_0:
		blk := x[i/32*32 : i/32*32+32]
		var xmax float32 // the first value of largest magnitude
		for _, u := range blk {
			if absf(u) > absf(xmax) {
				xmax = u
			}
		}
		m := math.Abs(float64(xmax))
		if wt == WeightQ8_0 {
			d := float64(absf(xmax) / 127)
			return d/2 + 127*fp16Error(d) + 0x1p-20*m + 0x1p-140
		}
		d := m / 8
		excess := 0.0
		if xmax != 0 {
			excess = math.Max(0, -8*float64(x[i])/float64(xmax)-7.5)
		}
		return d*(0.5+excess) + 8*fp16Error(d) + 0x1p-20*m + 0x1p-140
	case WeightQ4_K:
		blk := q[i/qkK*q4KBlockBytes:]
		j := i % qkK / q4KSubLen
		sc, m := q4KScaleMin(j, blk[4:])
		s := float64(loadF16(blk[0:])) * float64(sc)
		mm := float64(loadF16(blk[2:])) * float64(m)
		return s/2 + distance(float64(x[i]), -mm, 15*s-mm) + 0x1p-20*(v+16*s+mm)
	case WeightQ5_0:
		blk := x[i/32*32 : i/32*32+32]
		var xmax float32
		for _, u := range blk {
			if absf(u) > absf(xmax) {
				xmax = u
			}
		}
		m := math.Abs(float64(xmax))
		d := m / 16
		excess := 0.0
		if xmax != 0 {
			excess = math.Max(0, -16*float64(x[i])/float64(xmax)-15.5)
		}
		return d*(0.5+excess) + 16*fp16Error(d) + 0x1p-20*m + 0x1p-140
	case WeightQ4_1, WeightQ5_1:
		blk := x[i/32*32 : i/32*32+32]
		lo, hi := blockRange(blk)
		steps := 15.0
		if wt == WeightQ5_1 {
			steps = 31
		}
		d := (float64(hi) - float64(lo)) / steps
		return d/2 + steps*fp16Error(d) + fp16Error(math.Abs(float64(lo))) + 0x1p-20*(v+math.Abs(float64(lo))+steps*d) + 0x1p-140
	case WeightQ5_K:
		blk := q[i/qkK*q5KBlockBytes:]
		j := i % qkK / q4KSubLen
		sc, m := q4KScaleMin(j, blk[4:])
		s := float64(loadF16(blk[0:])) * float64(sc)
		mm := float64(loadF16(blk[2:])) * float64(m)
		return s/2 + distance(float64(x[i]), -mm, 31*s-mm) + 0x1p-20*(v+32*s+mm)
	case WeightQ2_K:
		blk := q[i/qkK*q2KBlockBytes:]
		b := blk[i%qkK/q2KSubLen]
		s := float64(loadF16(blk[q2KDOffset:])) * float64(b&0x0f)
		mm := float64(loadF16(blk[q2KDOffset+2:])) * float64(b>>4)
		return s/2 + distance(float64(x[i]), -mm, 3*s-mm) + 0x1p-20*(v+4*s+mm)
	case WeightQ3_K:
		blk := q[i/qkK*q3KBlockBytes:]
		s := float64(loadF16(blk[q3KDOffset:])) * float64(q3KScale(blk[q3KScaleOffset:], i%qkK/q3KSubLen))
		lo, hi := math.Min(-4*s, 3*s), math.Max(-4*s, 3*s)
		return math.Abs(s)/2 + distance(float64(x[i]), lo, hi) + 0x1p-20*(v+5*math.Abs(s))
	default: // WeightQ6_K
		blk := q[i/qkK*q6KBlockBytes:]
		s := float64(loadF16(blk[q6KDOffset:])) * float64(int8(blk[q6KScaleOffset+i%qkK/q6KSubLen]))
		lo, hi := math.Min(-32*s, 31*s), math.Max(-32*s, 31*s)
		return math.Abs(s)/2 + distance(float64(x[i]), lo, hi) + 0x1p-20*(v+33*math.Abs(s))
	}
}

// relativeRMSError returns rms(y − x)/rms(x).
func relativeRMSError(x, y []float32) float64 {
	var se, sx float64
	for i := range x {
		e := float64(y[i]) - float64(x[i])
		se += e * e
		sx += float64(x[i]) * float64(x[i])
	}
	return math.Sqrt(se / sx)
}

// rmsErrorLimits are the regression thresholds for rms(x̂ − x)/rms(x) on rows of
// normally distributed values (see WeightType).
var rmsErrorLimits = map[WeightType]float64{WeightQ8_0: 0.007, WeightQ4_0: 0.1, WeightQ4_K: 0.085, WeightQ6_K: 0.025,
	WeightQ4_1: 0.09, WeightQ5_0: 0.05, WeightQ5_1: 0.045, WeightQ2_K: 0.33, WeightQ3_K: 0.17, WeightQ5_K: 0.042}

func TestWeightRoundTripWithinBounds(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(7, 11))
	kinds := []string{"normal", "uniform", "outliers", "positive", "heavy"}
	scales := []float64{1, 0.02, 300, 1e-3}
	for _, wt := range WeightTypes() {
		for _, kind := range kinds {
			for _, scale := range scales {
				for rep := 0; rep < 3; rep++ {
					x := weightTestRow(rng, kind, 4096, scale)
					q, y := quantizeWeights(t, wt, x)
					for i := range x {
						bound := weightErrorBound(wt, x, q, i)
						if err := math.Abs(float64(y[i]) - float64(x[i])); !(err <= bound) {
							require.FailNowf(t, "error above its bound", "%v %s×%g: element %d: x=%g x̂=%g, error %g > bound %g", wt, kind, scale, i, x[i], y[i], err, bound)
						}
					}
					if kind == "normal" {
						rel := relativeRMSError(x, y)
						require.LessOrEqual(t, rel, rmsErrorLimits[wt], "%v normal×%g: relative rms error", wt, scale)
						if rep == 0 {
							t.Logf("%v normal×%g: rms error %.4f·rms(x)", wt, scale, rel)
						}
					}
				}
			}
		}
	}
}

// TestQuantizeRowEdgeCases covers ggml's special cases for every type: an all-zero row
// decodes to zeros, a constant row to (almost) the constant, and a row with one huge
// outlier stays within the bounds, the other blocks unaffected.
func TestQuantizeRowEdgeCases(t *testing.T) {
	t.Parallel()

	for _, wt := range WeightTypes() {
		n := 2 * qkK
		t.Run(wt.String()+"/zeros", func(t *testing.T) {
			x := make([]float32, n)
			x[5] = float32(math.Copysign(0, -1))
			_, y := quantizeWeights(t, wt, x)
			for i, v := range y {
				require.Zero(t, v, "element %d", i) // ±0
			}
		})
		for _, c := range []float32{1.5, -1.5, 0.75, -3, 1000} {
			t.Run(fmt.Sprintf("%v/constant %g", wt, c), func(t *testing.T) {
				x := make([]float32, n)
				for i := range x {
					x[i] = c
				}
				q, y := quantizeWeights(t, wt, x)
				for i, v := range y {
					// The constant is exact up to the fp16 rounding of the scales.
					require.InDelta(t, c, v, 0x1p-10*float64(absf(c)), "element %d", i)
					require.LessOrEqual(t, math.Abs(float64(v-c)), weightErrorBound(wt, x, q, i))
				}
			})
		}
		t.Run(wt.String()+"/one outlier", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(wt)))
			x := weightTestRow(rng, "normal", n, 0.01)
			rest, _ := quantizeWeights(t, wt, x[qkK:])
			x[37] = 100
			q, y := quantizeWeights(t, wt, x)
			for i := range x {
				require.LessOrEqual(t, math.Abs(float64(y[i]-x[i])), weightErrorBound(wt, x, q, i), "element %d", i)
			}
			require.InDelta(t, 100, y[37], 100*0x1p-10)
			require.Equal(t, rest, q[len(q)/2:], "the second super-block does not see the outlier")
		})
	}
}

// TestQuantizeRowBlocksAreIndependent: a row is quantized block by block, so quantizing
// it whole equals quantizing its blocks one at a time.
func TestQuantizeRowBlocksAreIndependent(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(5, 8))
	for _, wt := range WeightTypes() {
		x := weightTestRow(rng, "heavy", 3*qkK, 0.5)
		whole, _ := quantizeWeights(t, wt, x)
		bs, bb := wt.BlockSize(), wt.BlockBytes()
		for b := 0; b < len(x)/bs; b++ {
			one, _ := quantizeWeights(t, wt, x[b*bs:(b+1)*bs])
			require.Equal(t, whole[b*bb:(b+1)*bb], one, "%v block %d", wt, b)
		}
	}
}

// TestRequantizationIsStable quantizes already-dequantized values again. For q8_0 and
// q4_0 the grid is recovered exactly: the bytes are identical. For q4_k, q6_k, q4_1, q5_0
// and q5_1 ggml's scale search starts afresh: on these normal and one-signed rows it
// reproduces every value (not always the bytes), and where outliers dominate it may settle
// on other scales, but the values stay within the bound of the new blocks and the rms
// error to the original row grows by less than 5%. The searches of q2_k, q3_k and q5_k
// move on every kind of row (measured: q2_k's rms error grows by up to 19%, q3_k's and
// q5_k's by 4% at most), so they are held to the bound and to 25% and 5%.
func TestRequantizationIsStable(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(9, 9))
	growth := map[WeightType]float64{WeightQ2_K: 1.25}
	for _, wt := range WeightTypes() {
		for _, kind := range []string{"normal", "positive", "outliers"} {
			x := weightTestRow(rng, kind, 4096, 0.1)
			q1, y1 := quantizeWeights(t, wt, x)
			q2, y2 := quantizeWeights(t, wt, y1)
			if wt == WeightQ8_0 || wt == WeightQ4_0 {
				require.Equal(t, q1, q2, "%v %s: requantized bytes", wt, kind)
				continue
			}
			moves := wt == WeightQ2_K || wt == WeightQ3_K || wt == WeightQ5_K
			if kind != "outliers" && !moves {
				// The same values; the bytes may differ (q6_k can flip the signs of d and
				// of all the scales).
				require.Equal(t, y1, y2, "%v %s: requantized values", wt, kind)
				continue
			}
			for i := range y1 {
				require.LessOrEqual(t, math.Abs(float64(y2[i]-y1[i])), weightErrorBound(wt, y1, q2, i), "%v %s: element %d", wt, kind, i)
			}
			first, second := relativeRMSError(x, y1), relativeRMSError(x, y2)
			require.LessOrEqual(t, second, max(1.05, growth[wt])*first, "%v %s: rms error after requantizing", wt, kind)
			t.Logf("%v %s: rms error %.4f after one round trip, %.4f after two", wt, kind, first, second)
		}
	}
}

// randomWeightBlocks returns nblocks blocks for wt filled by randomByte, with the fp16
// scales made finite (an all-ones exponent loses its top bit); every other bit pattern is
// a valid block.
func randomWeightBlocks(wt WeightType, nblocks int, randomByte func() byte) []byte {
	bb := wt.BlockBytes()
	halves := wt.HalfOffsets()
	b := make([]byte, nblocks*bb)
	for i := range b {
		b[i] = randomByte()
	}
	for blk := 0; blk < nblocks; blk++ {
		for _, off := range halves {
			p := b[blk*bb+off:]
			if h := binary.LittleEndian.Uint16(p); h&0x7c00 == 0x7c00 {
				binary.LittleEndian.PutUint16(p, h&^0x4000)
			}
		}
	}
	return b
}

// TestDequantizeRandomBlocksMatchesGGML decodes 64 blocks of random bytes (finite fp16
// scales) per type and compares with ggml's dequantize_row_* (see weights_golden_test.go;
// the blocks are generated by goldenRNG there; the later types' hashes come from
// llama-quantize, as goldenHashes' do).
func TestDequantizeRandomBlocksMatchesGGML(t *testing.T) {
	t.Parallel()

	want := map[WeightType]string{
		WeightQ8_0: "901b3a4288f2fa0c", WeightQ4_0: "2d469f85d3be98df",
		WeightQ4_K: "9edf2dd16a7d86c7", WeightQ6_K: "7781c72e7dad8e2a",
		// From llama-quantize --allow-requantize to F32 of a model holding these blocks.
		WeightQ4_1: "3cba318ea556bebc", WeightQ5_0: "9377622450afc044", WeightQ5_1: "833dfcda0dd88692",
		WeightQ2_K: "8a88be33d1e42078", WeightQ3_K: "08406ed3a9b6e081", WeightQ5_K: "cc89901a8086b865",
	}
	for _, wt := range WeightTypes() {
		row := goldenRandomBlocks(wt, 64)
		y := make([]float32, 64*wt.BlockSize())
		wt.DequantizeRow(y, row)
		require.Equal(t, want[wt], shortHash(float32Bytes(y)), "%v", wt)
	}
}

// goldenRandomBlocks returns the random blocks that the C oracle dequantized for
// TestDequantizeRandomBlocksMatchesGGML.
func goldenRandomBlocks(wt WeightType, nblocks int) []byte {
	r := &goldenRNG{s: 0x2545f4914f6cdd1d ^ uint64(wt)}
	return randomWeightBlocks(wt, nblocks, func() byte { return byte(r.next() >> 56) })
}
