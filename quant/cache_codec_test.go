package quant

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/kvref/kvref/internal/half"
	"github.com/kvref/kvref/internal/kernels"
)

// shape is a K/V row shape: kvHeads heads of headDim values.
type shape struct{ kvHeads, headDim int }

// testShapes covers heads inside one q8_0 block (headDim 4, 8), heads spanning several
// blocks (64, 128), heads not aligned to 8 (12, 33), tails (7, 33) and multiple heads.
var testShapes = []shape{
	{1, 7}, {1, 8}, {1, 32}, {1, 33}, {1, 64}, {1, 128},
	{4, 7}, {4, 8}, {4, 32}, {4, 33}, {4, 64}, {4, 128},
	{8, 4}, {8, 12}, {2, 48},
}

// dataset makes a row of n values.
type dataset struct {
	name string
	gen  func(rng *rand.Rand, n int) []float32
}

func normalRow(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

func withOutlier(v float32) func(*rand.Rand, int) []float32 {
	return func(rng *rand.Rand, n int) []float32 {
		x := normalRow(rng, n)
		x[rng.IntN(n)] = v
		return x
	}
}

func subnormal(rng *rand.Rand) float32 {
	return math.Float32frombits(rng.Uint32() & 0x807fffff)
}

var datasets = []dataset{
	{"random", normalRow},
	{"wide", func(rng *rand.Rand, n int) []float32 { // magnitudes 2^-40 .. 2^40
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Ldexp(1+rng.Float64(), rng.IntN(81)-40))
			if rng.IntN(2) == 0 {
				x[i] = -x[i]
			}
		}
		return x
	}},
	{"zeros", func(_ *rand.Rand, n int) []float32 { return make([]float32, n) }},
	{"negative-zeros", func(_ *rand.Rand, n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Copysign(0, -1))
		}
		return x
	}},
	{"outlier-1e30", withOutlier(1e30)},
	{"outlier-3e38", withOutlier(-3e38)},
	{"denormals", func(rng *rand.Rand, n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = subnormal(rng)
		}
		return x
	}},
	{"denormals-and-normals", func(rng *rand.Rand, n int) []float32 {
		x := normalRow(rng, n)
		for i := range x {
			if i%2 == 0 {
				x[i] = subnormal(rng)
			}
		}
		return x
	}},
	{"halves", func(rng *rand.Rand, n int) []float32 { // k/2 with maxabs 127: int8/q8_0 ties
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.IntN(509)-254) / 2
		}
		x[0] = 127
		return x
	}},
	{"tiny", func(rng *rand.Rand, n int) []float32 { // around fp16's subnormal range
		x := normalRow(rng, n)
		for i := range x {
			x[i] *= 1e-6
		}
		return x
	}},
}

// sameBits reports whether a and b have identical bits.
func sameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// encodeExact encodes x into a buffer of exactly RowBytes bytes, checking that Encode
// writes every byte (the result does not depend on the buffer's old contents) and
// nothing beyond it.
func encodeExact(t *testing.T, ct CacheType, x []float32, s shape) []byte {
	n := ct.RowBytes(s.kvHeads, s.headDim)
	var rows [2][]byte
	for k, fill := range []byte{0x00, 0xa5} {
		buf := bytes.Repeat([]byte{fill}, n+16)
		ct.Encode(buf[:n:n+16], x, s.kvHeads, s.headDim)
		require.Equal(t, bytes.Repeat([]byte{fill}, 16), buf[n:], "Encode wrote past RowBytes")
		rows[k] = buf[:n]
	}
	require.Equal(t, rows[0], rows[1], "Encode left bytes of the row unwritten")
	return rows[0]
}

func TestFusedKernelsMatchDecodeBitwise(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(7, 8))
	for _, ct := range CacheTypes() {
		for _, s := range testShapes {
			if ct.Validate(s.kvHeads, s.headDim) != nil {
				continue
			}
			for _, ds := range datasets {
				t.Run(fmt.Sprintf("%v/%dx%d/%s", ct, s.kvHeads, s.headDim, ds.name), func(t *testing.T) {
					n := s.kvHeads * s.headDim
					row := encodeExact(t, ct, ds.gen(rng, n), s)
					// The same bytes at an odd address: the f32 type reads aligned rows
					// in place and must decode unaligned ones to the same values.
					odd := make([]byte, len(row)+1)[1:]
					copy(odd, row)
					decoded := make([]float32, n)
					ct.Decode(decoded, row, s.kvHeads, s.headDim)
					for h := range s.kvHeads {
						head := decoded[h*s.headDim : (h+1)*s.headDim]
						q := normalRow(rng, s.headDim)
						want := kernels.Dot(q, head)
						got := ct.DotHead(q, row, h, s.kvHeads, s.headDim)
						require.Truef(t, sameBits(want, got), "head %d: DotHead = %v (%#08x), Decode+kernels.Dot = %v (%#08x)",
							h, got, math.Float32bits(got), want, math.Float32bits(want))
						gotOdd := ct.DotHead(q, odd, h, s.kvHeads, s.headDim)
						require.Truef(t, sameBits(want, gotOdd), "head %d, unaligned row: DotHead = %v, Decode+kernels.Dot = %v", h, gotOdd, want)

						for _, a := range []float32{float32(rng.NormFloat64()), 0, -1, 1e-3} {
							wantDst := normalRow(rng, s.headDim)
							gotDst := slices.Clone(wantDst)
							oddDst := slices.Clone(wantDst)
							kernels.Axpy(wantDst, a, head)
							ct.AxpyHead(gotDst, a, row, h, s.kvHeads, s.headDim)
							ct.AxpyHead(oddDst, a, odd, h, s.kvHeads, s.headDim)
							for i := range wantDst {
								require.Truef(t, sameBits(wantDst[i], gotDst[i]), "head %d a=%v element %d: AxpyHead = %v, Decode+kernels.Axpy = %v",
									h, a, i, gotDst[i], wantDst[i])
								require.Truef(t, sameBits(wantDst[i], oddDst[i]), "head %d a=%v element %d, unaligned row: AxpyHead = %v, Decode+kernels.Axpy = %v",
									h, a, i, oddDst[i], wantDst[i])
							}
						}
					}
				})
			}
		}
	}
}

// TestDotHeadNegativeZeroLanes: when every product is -0, kernels.Dot's tail adds +0 to
// every lane and returns +0; DotHead must do the same.
func TestDotHeadNegativeZeroLanes(t *testing.T) {
	t.Parallel()

	for _, ct := range CacheTypes() {
		for _, s := range []shape{{4, 8}, {1, 32}, {1, 33}} {
			if ct.Validate(s.kvHeads, s.headDim) != nil {
				continue
			}
			n := s.kvHeads * s.headDim
			x := make([]float32, n)
			for i := range x {
				x[i] = 1
			}
			row := make([]byte, ct.RowBytes(s.kvHeads, s.headDim))
			ct.Encode(row, x, s.kvHeads, s.headDim)
			q := make([]float32, s.headDim)
			for i := range q {
				q[i] = float32(math.Copysign(0, -1))
			}
			decoded := make([]float32, n)
			ct.Decode(decoded, row, s.kvHeads, s.headDim)
			want := kernels.Dot(q, decoded[:s.headDim])
			got := ct.DotHead(q, row, 0, s.kvHeads, s.headDim)
			if !sameBits(want, got) { // tested before require: this runs in a hot loop
				require.FailNow(t, fmt.Sprintf("%v %v: got %v want %v", ct, s, got, want))
			}
		}
	}
}

// roundTripError returns an error describing the first element of x whose round trip
// through ct breaks the bound stated in the package documentation.
func roundTripError(ct CacheType, x []float32, s shape) error {
	xh := slices.Clone(x)
	ct.RoundTrip(xh, s.kvHeads, s.headDim)
	for i, v := range x {
		if err := elementBound(ct, x, xh, i, s); err != nil {
			return fmt.Errorf("%v %dx%d element %d: x=%v (%#08x) x̂=%v: %w", ct, s.kvHeads, s.headDim, i, v, math.Float32bits(v), xh[i], err)
		}
	}
	return nil
}

// groupMaxAbs returns the largest |x| over x[lo:hi], computed independently of maxAbs.
func groupMaxAbs(x []float32, lo, hi int) float32 {
	m := 0.0
	for _, v := range x[lo:hi] {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return float32(m)
}

// halfULPE4M3 is half the spacing of E4M3 values around |r|.
func halfULPE4M3(r float32) float64 {
	a := math.Abs(float64(r))
	if a < 0x1p-6 {
		return 0x1p-10
	}
	return math.Ldexp(1, int(math.Floor(math.Log2(a)))-4)
}

func elementBound(ct CacheType, x, xh []float32, i int, s shape) error {
	v, got := float64(x[i]), float64(xh[i])
	a, err := math.Abs(v), math.Abs(got-v)
	check := func(bound float64) error {
		if !(err <= bound) {
			return fmt.Errorf("error %g exceeds bound %g", err, bound)
		}
		return nil
	}
	wantExactly := func(w float64) error {
		if got != w {
			return fmt.Errorf("want exactly %v", w)
		}
		return nil
	}
	const slackRel, slackAbs = 0x1p-20, 0x1p-140
	switch ct {
	case F32:
		if !sameBits(x[i], xh[i]) {
			return fmt.Errorf("f32 must round-trip exactly")
		}
		return nil
	case F16:
		switch {
		case a >= 65520:
			return wantExactly(math.Copysign(math.Inf(1), v))
		case a >= 0x1p-14:
			return check(0x1p-11 * a)
		default:
			return check(0x1p-25)
		}
	case BF16:
		switch {
		case math.Float32bits(float32(a)) >= 0x7f7f8000:
			return wantExactly(math.Copysign(math.Inf(1), v))
		case a >= 0x1p-126:
			return check(0x1p-8 * a)
		default:
			return check(0x1p-134)
		}
	case FP8E5M2:
		switch {
		case a >= FP8E5M2Max:
			return wantExactly(math.Copysign(FP8E5M2Max, v))
		case a >= 0x1p-14:
			return check(0x1p-3 * a)
		default:
			return check(0x1p-17)
		}
	case Int8:
		h := i / s.headDim
		m := groupMaxAbs(x, h*s.headDim, (h+1)*s.headDim)
		sc := m / 127
		return check(float64(sc)/2 + slackRel*float64(m) + slackAbs)
	case FP8E4M3:
		h := i / s.headDim
		m := groupMaxAbs(x, h*s.headDim, (h+1)*s.headDim)
		sc := m / 448
		if sc == 0 {
			return check(slackAbs)
		}
		r := x[i] / sc
		return check(float64(sc)*halfULPE4M3(r) + slackRel*float64(m) + slackAbs)
	case Q8_0:
		b := i / 32
		m := groupMaxAbs(x, b*32, (b+1)*32)
		d := m / 127
		if d >= 65520 { // the fp16 scale overflows, as in llama.cpp
			if !math.IsInf(got, 0) && !math.IsNaN(got) {
				return fmt.Errorf("block scale %v overflows fp16, want ±Inf or NaN", d)
			}
			return nil
		}
		dd := float64(d)
		return check(dd/2 + 127*math.Max(0x1p-11*dd, 0x1p-25) + slackRel*float64(m) + slackAbs)
	case Q4_0, Q5_0:
		// d = m/8 (m/16) on a lopsided grid −8d..7d (−16d..15d): values of the other sign
		// than the block's extreme value xmax beyond 7.5 (15.5) steps clamp to 7d (15d).
		steps := map[CacheType]float64{Q4_0: 8, Q5_0: 16}[ct]
		blk := x[i/blockLen*blockLen : (i/blockLen+1)*blockLen]
		var xmax float32 // the first value of largest magnitude
		for _, u := range blk {
			if math.Abs(float64(u)) > math.Abs(float64(xmax)) {
				xmax = u
			}
		}
		m := math.Abs(float64(xmax))
		d := m / steps
		if d >= 65520 { // the fp16 scale overflows, as in llama.cpp
			return wantNonFinite(got, d)
		}
		excess := 0.0
		if xmax != 0 {
			excess = math.Max(0, -steps*v/float64(xmax)-(steps-0.5))
		}
		return check(d*(0.5+excess) + steps*fp16Error(d) + slackRel*m + slackAbs)
	case Q4_1, Q5_1:
		// d = (max−min)/15 (31): half a step, the fp16 roundings of d (at most 15 or 31
		// steps of it) and of the stored min, and the float32 roundings.
		codes := map[CacheType]float64{Q4_1: 15, Q5_1: 31}[ct]
		blk := x[i/blockLen*blockLen : (i/blockLen+1)*blockLen]
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, u := range blk {
			lo, hi = math.Min(lo, float64(u)), math.Max(hi, float64(u))
		}
		d := float64(float32(hi-lo)) / codes
		if d >= 65520 || math.Abs(lo) >= 65520 || math.IsInf(d, 0) { // fp16 overflow of d or min
			return wantNonFinite(got, d)
		}
		return check(d/2 + codes*fp16Error(d) + fp16Error(math.Abs(lo)) + slackRel*(a+math.Abs(lo)+(codes+1)*d) + slackAbs)
	case IQ4_NL:
		// Every code is the grid point nearest to x/d₀, d₀ = max/−127 (the grid's widest gap
		// is 24, and values beyond 113·|d₀| on the other side clamp to 113: at most 14·|d₀|
		// away), and the stored scale D replaces d₀: at most 127·|D−d₀| more.
		b := i / blockLen
		row := make([]byte, ct.RowBytes(s.kvHeads, s.headDim))
		ct.Encode(row, x, s.kvHeads, s.headDim)
		stored := float64(loadF16(row[b*iq4nlBlockBytes:]))
		if math.IsInf(stored, 0) || math.IsNaN(stored) {
			return wantNonFinite(got, stored)
		}
		var xmax float64 // the first value of largest magnitude
		for _, u := range x[b*blockLen : (b+1)*blockLen] {
			if math.Abs(float64(u)) > math.Abs(xmax) {
				xmax = float64(u)
			}
		}
		if math.Abs(xmax) < 1e-15 {
			return wantExactly(0)
		}
		d0 := xmax / -127
		return check(14*math.Abs(d0) + 127*math.Abs(stored-d0) + slackRel*math.Abs(xmax) + slackAbs)
	}
	return fmt.Errorf("unknown cache type %v", ct)
}

// wantNonFinite requires a decoded value to be ±Inf or NaN, as llama.cpp's are when a
// block's fp16 scale (or minimum) overflows.
func wantNonFinite(got, scale float64) error {
	if !math.IsInf(got, 0) && !math.IsNaN(got) {
		return fmt.Errorf("block scale %v overflows fp16, want ±Inf or NaN", scale)
	}
	return nil
}

func TestRoundTripWithinBounds(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(9, 10))
	for _, ct := range CacheTypes() {
		for _, s := range testShapes {
			if ct.Validate(s.kvHeads, s.headDim) != nil {
				continue
			}
			for _, ds := range datasets {
				for range 4 {
					require.NoError(t, roundTripError(ct, ds.gen(rng, s.kvHeads*s.headDim), s), ds.name)
				}
			}
		}
	}
}

// TestRoundTripIsEncodeDecode checks that RoundTrip is exactly Decode(Encode(x)) and that
// a second round trip changes nothing (the decoded values are representable).
func TestRoundTripIsEncodeDecode(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(11, 12))
	for _, ct := range CacheTypes() {
		s := shape{4, 64}
		x := normalRow(rng, 256)
		row := make([]byte, ct.RowBytes(s.kvHeads, s.headDim))
		ct.Encode(row, x, s.kvHeads, s.headDim)
		want := make([]float32, len(x))
		ct.Decode(want, row, s.kvHeads, s.headDim)
		got := slices.Clone(x)
		ct.RoundTrip(got, s.kvHeads, s.headDim)
		require.Equal(t, want, got, ct.String())
		again := slices.Clone(got)
		ct.RoundTrip(again, s.kvHeads, s.headDim)
		require.Equal(t, got, again, "%v: a second round trip must be the identity", ct)
	}
}

func TestZeroHeadsDecodeToZero(t *testing.T) {
	t.Parallel()

	for _, ct := range []CacheType{Int8, FP8E4M3, Q8_0} {
		x := normalRow(rand.New(rand.NewPCG(1, 1)), 64)
		clear(x[:32]) // the first head (and the first q8_0 block) is all zero
		row := make([]byte, ct.RowBytes(2, 32))
		ct.Encode(row, x, 2, 32)
		got := make([]float32, 64)
		ct.Decode(got, row, 2, 32)
		for i := range 32 {
			if !sameBits(0, got[i]) { // tested before require: this runs in a hot loop
				require.FailNow(t, fmt.Sprintf("%v element %d = %v", ct, i, got[i]))
			}
		}
		if ct != Q8_0 {
			require.Equal(t, []byte{0, 0, 0, 0}, row[:4], "%v: an all-zero head has scale 0", ct)
		}
	}
}

func TestInt8Layout(t *testing.T) {
	t.Parallel()

	x := []float32{-254, 1, 0.5, -0.5, 1.5, 2.5, -2.5, 0}
	row := make([]byte, Int8.RowBytes(1, 8))
	Int8.Encode(row, x, 1, 8)
	require.Equal(t, float32(2), getScale(row))
	// x/2 = -127, 0.5, 0.25, -0.25, 0.75, 1.25, -1.25, 0 -> half away from zero
	require.Equal(t, []int8{-127, 1, 0, 0, 1, 1, -1, 0}, asInt8(row[4:]))
}

func TestFP8E4M3Layout(t *testing.T) {
	t.Parallel()

	x := []float32{896, -896, 2, 0}
	row := make([]byte, FP8E4M3.RowBytes(1, 4))
	FP8E4M3.Encode(row, x, 1, 4)
	require.Equal(t, float32(2), getScale(row))
	require.Equal(t, []byte{0x7e, 0xfe, 0x38, 0x00}, row[4:]) // 448, -448, 1, 0
}

func asInt8(b []byte) []int8 {
	out := make([]int8, len(b))
	for i, v := range b {
		out[i] = int8(v)
	}
	return out
}

// TestQ8_0MatchesGGML checks blocks against values worked out by hand from ggml's
// quantize_row_q8_0_ref: d = amax/127, stored as fp16, q = roundf(x/d) (half away from
// zero).
func TestQ8_0MatchesGGML(t *testing.T) {
	t.Parallel()

	x := make([]float32, 64)
	// Block 0: amax 127 -> d = 1 (fp16 0x3C00); ties at .5 round away from zero.
	copy(x, []float32{127, -127, 0.5, -0.5, 1.5, -1.5, 2.5, -2.49, 3, 0.49999997})
	// Block 1: amax 254 -> d = 2 (fp16 0x4000).
	copy(x[32:], []float32{254, 3, -3, 5, 1e-9})
	row := make([]byte, Q8_0.RowBytes(2, 32))
	Q8_0.Encode(row, x, 2, 32)
	require.Len(t, row, 68)
	require.Equal(t, []byte{0x00, 0x3c}, row[0:2])
	require.Equal(t, []int8{127, -127, 1, -1, 2, -2, 3, -2, 3, 0, 0}, asInt8(row[2:13]))
	require.Equal(t, []byte{0x00, 0x40}, row[34:36])
	require.Equal(t, []int8{127, 2, -2, 3, 0, 0}, asInt8(row[36:42]))

	// amax 1: d = 1/127 in float32, stored as fp16 0x2008 (0.0078735...), and the
	// decoded value uses the stored scale: 127 * half.F16ToF32(0x2008).
	y := make([]float32, 32)
	y[0] = 1
	blk := make([]byte, 34)
	Q8_0.Encode(blk, y, 1, 32)
	require.Equal(t, half.F32ToF16(float32(1)/127), uint16(blk[0])|uint16(blk[1])<<8)
	out := make([]float32, 32)
	Q8_0.Decode(out, blk, 1, 32)
	require.Equal(t, float32(127)*half.F16ToF32(half.F32ToF16(float32(1)/127)), out[0])
}

func TestQ8_0OverflowingScaleIsLikeGGML(t *testing.T) {
	t.Parallel()

	x := make([]float32, 32)
	x[0], x[1] = 1e30, 1
	row := make([]byte, 34)
	Q8_0.Encode(row, x, 1, 32)
	require.Equal(t, []byte{0x00, 0x7c}, row[:2], "fp16(1e30/127) is +Inf")
	out := make([]float32, 32)
	Q8_0.Decode(out, row, 1, 32)
	require.True(t, math.IsInf(float64(out[0]), 1))
	require.True(t, math.IsNaN(float64(out[1])), "q = 0 times Inf")
}

func TestRoundTripPropertyRapid(t *testing.T) {
	t.Parallel()

	rapid.Check(t, func(rt *rapid.T) {
		ct := rapid.SampledFrom(CacheTypes()).Draw(rt, "type")
		s := shape{rapid.IntRange(1, 4).Draw(rt, "kvHeads"), rapid.IntRange(1, 70).Draw(rt, "headDim")}
		if ct.Validate(s.kvHeads, s.headDim) != nil { // the block types: whole blocks of 32
			s.headDim = 32 * rapid.IntRange(1, 3).Draw(rt, "blocks")
		}
		n := s.kvHeads * s.headDim
		// Mix the full float32 range with values of one chosen magnitude, so that
		// both outliers and ordinary heads appear.
		exp := rapid.IntRange(-149, 126).Draw(rt, "exp")
		x := make([]float32, n)
		for i := range x {
			if rapid.IntRange(0, 9).Draw(rt, "kind") == 0 {
				x[i] = rapid.Float32().Draw(rt, "any")
			} else {
				x[i] = float32(math.Ldexp(rapid.Float64Range(-2, 2).Draw(rt, "mant"), exp))
			}
		}
		require.NoError(rt, roundTripError(ct, x, s))
		// The fused kernels agree with Decode on the same rows.
		row := make([]byte, ct.RowBytes(s.kvHeads, s.headDim))
		ct.Encode(row, x, s.kvHeads, s.headDim)
		decoded := make([]float32, n)
		ct.Decode(decoded, row, s.kvHeads, s.headDim)
		h := rapid.IntRange(0, s.kvHeads-1).Draw(rt, "head")
		q := make([]float32, s.headDim)
		for i := range q {
			q[i] = rapid.Float32Range(-4, 4).Draw(rt, "q")
		}
		head := decoded[h*s.headDim : (h+1)*s.headDim]
		want, got := kernels.Dot(q, head), ct.DotHead(q, row, h, s.kvHeads, s.headDim)
		if !sameBits(want, got) { // tested before require: this runs in a hot loop
			require.FailNow(rt, fmt.Sprintf("DotHead = %v, Decode+kernels.Dot = %v", got, want))
		}
	})
}

// TestHeadBytesCoverWhatAHeadReads: a head's DotHead and AxpyHead depend only on the bytes
// HeadBytes names: garbage everywhere else in the row changes nothing.
func TestHeadBytesCoverWhatAHeadReads(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(17, 18))
	for _, ct := range CacheTypes() {
		for _, s := range testShapes {
			if ct.Validate(s.kvHeads, s.headDim) != nil {
				continue
			}
			row := encodeExact(t, ct, normalRow(rng, s.kvHeads*s.headDim), s)
			for h := range s.kvHeads {
				lo, hi := ct.HeadBytes(h, s.kvHeads, s.headDim)
				require.True(t, 0 <= lo && lo < hi && hi <= len(row), "%v %dx%d head %d: [%d, %d) in a row of %d", ct, s.kvHeads, s.headDim, h, lo, hi, len(row))
				garbled := bytes.Repeat([]byte{0x7f}, len(row))
				copy(garbled[lo:hi], row[lo:hi])
				q := normalRow(rng, s.headDim)
				require.Equal(t, math.Float32bits(ct.DotHead(q, row, h, s.kvHeads, s.headDim)), math.Float32bits(ct.DotHead(q, garbled, h, s.kvHeads, s.headDim)), "%v head %d", ct, h)
				want, got := make([]float32, s.headDim), make([]float32, s.headDim)
				ct.AxpyHead(want, 0.5, row, h, s.kvHeads, s.headDim)
				ct.AxpyHead(got, 0.5, garbled, h, s.kvHeads, s.headDim)
				require.Equal(t, want, got, "%v head %d", ct, h)
			}
			require.Panics(t, func() { ct.HeadBytes(s.kvHeads, s.kvHeads, s.headDim) })
		}
	}
}

// TestEncodeF32InPlaceOrNot: an f32 row's bytes are each value's float32 bits
// little-endian, whether Encode copies them as values (an aligned row on a little-endian
// machine) or writes them byte by byte (a row at an odd address).
func TestEncodeF32InPlaceOrNot(t *testing.T) {
	t.Parallel()

	x := []float32{1, -2.5, float32(math.Inf(1)), math.Float32frombits(0x7fc00001), 0x1p-140, -0, 3e38, 7}
	want := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(want[4*i:], math.Float32bits(v))
	}
	buf := make([]byte, 4*len(x)+1)
	for _, off := range []int{0, 1} {
		row := buf[off : off+4*len(x)]
		clear(buf)
		F32.Encode(row, x, 2, 4)
		require.Equalf(t, want, row, "row at offset %d", off)
	}
}
