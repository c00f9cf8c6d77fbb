package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// kernelSet is one implementation of the kernels that have a fast path, tested against the
// portable definitions dotGeneric, matMulRowsGeneric and axpyGeneric.
type kernelSet struct {
	name       string
	dot        func(x, y []float32) float32
	matMulRows func(out, w, x []float32, rows, cols, batch, start, end int)
	axpy       func(dst []float32, a float32, x []float32)
	// raw sets are the assembly kernels called directly, without the dispatcher: they get
	// only arguments the dispatcher would give them (in range, cols ≥ 1, no aliasing).
	raw bool
}

// levelSet is the package API with the kernels restricted to one level for each call,
// recording which implementations ran.
func levelSet(level string) kernelSet {
	return kernelSet{
		name: level,
		dot: func(x, y []float32) float32 {
			defer atLevel(level)()
			use(implDotAVX)
			return Dot(x, y)
		},
		matMulRows: func(out, w, x []float32, rows, cols, batch, start, end int) {
			defer atLevel(level)()
			if batch == 1 {
				use(implMatVecAVX)
			} else {
				use(implMatMulAVX)
			}
			MatMulRows(out, w, x, rows, cols, batch, start, end)
		},
		axpy: func(dst []float32, a float32, x []float32) {
			defer atLevel(level)()
			use(implAxpyAVX)
			Axpy(dst, a, x)
		},
	}
}

// allSets returns the package API at every level this CPU has (testLevels) and, when this
// build and CPU have them, the assembly kernels called directly.
func allSets() []kernelSet {
	var sets []kernelSet
	for _, l := range testLevels() {
		sets = append(sets, levelSet(l))
	}
	fast, _ := fastKernelSets()
	return append(sets, fast...)
}

// defaultNaN is the NaN that x86 arithmetic creates (Inf-Inf, 0·Inf).
var defaultNaN = math.Float32frombits(0xffc00000)

// sameResult reports whether got is what the portable path computed: the same bits, or
// both NaN when strict is false (which NaN is unspecified, see the package documentation).
func sameResult(want, got float32, strict bool) bool {
	if math.Float32bits(want) == math.Float32bits(got) {
		return true
	}
	return !strict && want != want && got != got
}

// onlyDefaultNaN reports whether every NaN in the slices is defaultNaN, so that the NaN
// bits of the results are pinned down too.
func onlyDefaultNaN(vs ...[]float32) bool {
	for _, v := range vs {
		for _, f := range v {
			if f != f && math.Float32bits(f) != 0xffc00000 {
				return false
			}
		}
	}
	return true
}

// requireSameResults fails unless got matches want element by element (see sameResult).
func requireSameResults(t *testing.T, want, got []float32, strict bool, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for i := range want {
		if !sameResult(want[i], got[i], strict) {
			require.Failf(t, "fast and portable results differ",
				"%s: element %d: portable %v (%#08x), fast %v (%#08x)", what, i,
				want[i], math.Float32bits(want[i]), got[i], math.Float32bits(got[i]))
		}
	}
}

// dataKind names a family of inputs.
type dataKind string

const (
	kindNormal       dataKind = "normal"       // N(0, 1)
	kindWide         dataKind = "wide"         // any finite float32: overflow and underflow everywhere
	kindNearOverflow dataKind = "nearOverflow" // |v| ≈ 1e19: products near MaxFloat32, sums overflow, Inf-Inf
	kindSubnormal    dataKind = "subnormal"    // products and values in the subnormal range
	kindSpecial      dataKind = "special"      // ±0, ±1, ±Max, ±Inf, default NaN, subnormals, mixed
	kindMixed        dataKind = "mixed"        // N(0, 1) with 5% special values
	kindCancel       dataKind = "cancel"       // elements i and i+8 cancel exactly: lanes end at zero
	kindNegZero      dataKind = "negZero"      // every value -0: all products ±0
	kindNaNPayloads  dataKind = "nanPayloads"  // N(0, 1) with 10% NaNs of several payloads (NaN bits unspecified)
)

var allKinds = []dataKind{kindNormal, kindWide, kindNearOverflow, kindSubnormal, kindSpecial,
	kindMixed, kindCancel, kindNegZero, kindNaNPayloads}

var specialValues = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -2,
	math.MaxFloat32, -math.MaxFloat32, 3e38, -3e38, 1.9e19, -1.9e19,
	float32(math.Inf(1)), float32(math.Inf(-1)), defaultNaN,
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-39, -1e-39,
	1.1754944e-38, -1.1754944e-38, 1e-20, -1e-20,
}

var nanPayloads = []uint32{0x7fc00000, 0x7fc01234, 0xffc00000, 0x7f800001, 0xffa00005}

// fill sets v to values of the given kind.
func fill(rng *rand.Rand, kind dataKind, v []float32) {
	for i := range v {
		switch kind {
		case kindNormal:
			v[i] = float32(rng.NormFloat64())
		case kindWide:
			for {
				b := rng.Uint32()
				if b&0x7f800000 != 0x7f800000 {
					v[i] = math.Float32frombits(b)
					break
				}
			}
		case kindNearOverflow:
			v[i] = float32((1 + rng.Float64()) * 1e19 * sign(rng))
		case kindSubnormal:
			if rng.IntN(2) == 0 {
				v[i] = float32((0.5 + rng.Float64()) * 1e-20 * sign(rng)) // products ≈ 1e-40
			} else {
				v[i] = math.Float32frombits(rng.Uint32N(0x800000)) * float32(sign(rng)) // subnormal or 0
			}
		case kindSpecial:
			v[i] = specialValues[rng.IntN(len(specialValues))]
		case kindMixed:
			v[i] = float32(rng.NormFloat64())
			if rng.IntN(20) == 0 {
				v[i] = specialValues[rng.IntN(len(specialValues))]
			}
		case kindCancel:
			if i%16 < 8 {
				v[i] = float32(rng.NormFloat64())
			} else {
				v[i] = -v[i-8]
			}
		case kindNegZero:
			v[i] = float32(math.Copysign(0, -1))
		case kindNaNPayloads:
			v[i] = float32(rng.NormFloat64())
			if rng.IntN(10) == 0 {
				v[i] = math.Float32frombits(nanPayloads[rng.IntN(len(nanPayloads))])
			}
		default:
			panic("unknown kind " + kind)
		}
	}
}

func sign(rng *rand.Rand) float64 {
	if rng.IntN(2) == 0 {
		return -1
	}
	return 1
}

// secondOperand fills the second input of a kind: for kindCancel and kindNegZero a vector
// of ones (so that the products cancel or are -0), otherwise the same kind.
func secondOperand(rng *rand.Rand, kind dataKind, v []float32) {
	if kind == kindCancel || kind == kindNegZero {
		for i := range v {
			v[i] = 1
		}
		return
	}
	fill(rng, kind, v)
}

// at returns a slice of n floats that starts off floats into a fresh buffer (so that its
// address is misaligned by off·4 bytes from the allocation) and ends before guard floats
// holding a NaN pattern.
func at(n, off int) []float32 {
	buf := make([]float32, off+n+8)
	for i := range buf {
		buf[i] = math.Float32frombits(0x7fbadbad)
	}
	return buf[off : off+n : off+n]
}

var testLengths = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 255, 4097}

func TestDotMatchesGeneric(t *testing.T) {
	for _, set := range allSets() {
		t.Run(set.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 1))
			for _, kind := range allKinds {
				for _, n := range testLengths {
					for xOff := range 8 {
						for yOff := range 8 {
							if n > 300 && (xOff+yOff)%3 != 0 {
								continue // keep the long vectors to a sample of alignments
							}
							x, y := at(n, xOff), at(n+yOff%2, yOff) // y may be longer than x
							fill(rng, kind, x)
							secondOperand(rng, kind, y)
							want := dotGeneric(x, y)
							got := set.dot(x, y)
							strict := onlyDefaultNaN(x, y)
							if !sameResult(want, got, strict) {
								require.Failf(t, "Dot differs from dotGeneric",
									"%s n=%d offsets x+%d y+%d: portable %v (%#08x), fast %v (%#08x)",
									kind, n, xOff, yOff, want, math.Float32bits(want), got, math.Float32bits(got))
							}
						}
					}
				}
			}
		})
	}
}

// TestDotEdgeCases pins down a few results exactly, in every path.
func TestDotEdgeCases(t *testing.T) {
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	ones9 := []float32{1, 1, 1, 1, 1, 1, 1, 1, 1}
	for _, set := range allSets() {
		t.Run(set.name, func(t *testing.T) {
			for _, c := range []struct {
				name string
				x, y []float32
				want float32
			}{
				{"empty", nil, nil, 0},
				{"all products -0", []float32{negZero, negZero, negZero, negZero, negZero, negZero, negZero, negZero, negZero}, ones9, 0},
				{"overflow to +Inf", []float32{math.MaxFloat32, 0, 0, 0, 0, 0, 0, 0, math.MaxFloat32}, []float32{2, 0, 0, 0, 0, 0, 0, 0, 1}, inf},
				{"Inf - Inf in one lane", []float32{inf, 0, 0, 0, 0, 0, 0, 0, inf}, []float32{1, 0, 0, 0, 0, 0, 0, 0, -1}, defaultNaN},
				{"0 · Inf", []float32{0}, []float32{inf}, defaultNaN},
				{"subnormal products kept", []float32{0x1p-70, 0x1p-70}, []float32{0x1p-70, 0x1p-70}, 0x1p-139},
				{"lane order, not left to right", []float32{1e8, 1, 0, 0, -1e8, 0, 0, 0}, ones9, 1},
			} {
				got := set.dot(c.x, c.y)
				require.Equalf(t, math.Float32bits(c.want), math.Float32bits(got), "%s: got %v want %v", c.name, got, c.want)
				require.Equalf(t, math.Float32bits(dotGeneric(c.x, c.y)), math.Float32bits(got), "%s: fast vs portable", c.name)
			}
		})
	}
}

func TestMatMulRowsMatchesGeneric(t *testing.T) {
	colsList := []int{0, 1, 7, 8, 9, 15, 16, 31, 33, 64, 100}
	for _, set := range allSets() {
		t.Run(set.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, 2))
			for _, kind := range []dataKind{kindNormal, kindWide, kindSpecial, kindMixed, kindNearOverflow, kindCancel, kindNaNPayloads} {
				for rows := 1; rows <= 9; rows++ {
					for batch := 1; batch <= 9; batch++ {
						for _, cols := range colsList {
							if cols == 0 && set.raw {
								continue // the dispatcher sends cols = 0 to the portable loop
							}
							ranges := [][2]int{{0, rows}}
							if rows >= 3 {
								ranges = append(ranges, [2]int{1, rows - 1}, [2]int{rows / 2, rows})
							}
							for _, rg := range ranges {
								checkMatMulRows(t, rng, set, kind, rows, cols, batch, rg[0], rg[1])
							}
						}
					}
				}
			}
			// One input over pieces of many rows: the four quarters of a piece side by side
			// (the quarter walk), from an offset and with rows left over.
			checkMatMulRows(t, rng, set, kindMixed, 53, 72, 1, 3, 50)
			checkMatMulRows(t, rng, set, kindNaNPayloads, 40, 136, 1, 0, 40)
			// A larger shape: long rows with a tail, an odd batch, many row blocks.
			checkMatMulRows(t, rng, set, kindNormal, 67, 4097, 3, 0, 67)
			checkMatMulRows(t, rng, set, kindMixed, 67, 4097, 7, 5, 62)
			// Long rows against full groups of inputs (six for gemm4x6AVX512 and gemm2x6AVX,
			// with four (17) and eight (14) more for gemm4x4AVX512; eight for
			// gemm4x8AVX512) and a remainder.
			checkMatMulRows(t, rng, set, kindNormal, 37, 3*256+8, 17, 0, 37)
			checkMatMulRows(t, rng, set, kindMixed, 13, 2*256+8, 16, 1, 12)
			checkMatMulRows(t, rng, set, kindSpecial, 8, 2*256, 24, 0, 8)
			checkMatMulRows(t, rng, set, kindNaNPayloads, 21, 2*256+16, 14, 2, 21)
			checkMatMulRows(t, rng, set, kindNearOverflow, 12, 3*256, 8, 0, 12)
			// Long batches: several blocks of eight vectors and of tokenBlock vectors, with
			// every kind of remainder, for cols with and without a tail.
			for _, batch := range []int{1, 16, 23, 64, 65, 77, 137} {
				checkMatMulRows(t, rng, set, kindNormal, 13, 72, batch, 0, 13)
				checkMatMulRows(t, rng, set, kindMixed, 10, 33, batch, 1, 9)
				checkMatMulRows(t, rng, set, kindSpecial, 8, 8, batch, 4, 8)
			}
			// The blocked prefill product: several chunks of columns (their lanes carried
			// from chunk to chunk), blocks of rows and of inputs, and every remainder.
			for _, c := range []struct {
				kind                          dataKind
				rows, cols, batch, start, end int
			}{
				{kindNormal, 70, 776, 139, 0, 70},
				{kindMixed, 41, 1032, 67, 3, 38},
				{kindSpecial, 36, 640, 14, 0, 36},
				{kindNaNPayloads, 33, 520, 13, 1, 33},
				{kindNearOverflow, 9, 392, 8, 0, 9},
				// More inputs than one block holds (gemmInputBlock: 120 of 4104 columns for
				// the wide kernel, 126 for the narrow one), with a remainder and leftovers.
				{kindMixed, 9, 4104, 137, 0, 9},
				{kindNormal, 6, 4104, 251, 1, 6},
				// Batches that the AVX-512 path lays out in pairs of rows (gemmWide512: at
				// least gemmPairedMinBatch inputs of at most gemmPairedMaxCols columns): groups
				// of eight rows with a partial last one (stored under a mask), groups of six
				// inputs, leftovers two at a time with a padded last one, for every kind of
				// value, and a batch one short of the threshold (gemm4x8AVX512 in place).
				{kindNaNPayloads, 37, 264, 50, 3, 37},
				{kindSpecial, 21, 72, 53, 0, 21},
				{kindNearOverflow, 5, 520, 49, 0, 5},
				{kindMixed, 19, 136, 47, 2, 19},
				// Rows long enough for inputs packed once where ZMM is full width
				// (wideInputsOnce), with two pairs of leftovers and with two and a padded one.
				{kindMixed, 19, 776, 52, 1, 19},
				{kindNormal, 11, 1024, 53, 0, 11},
			} {
				checkMatMulRows(t, rng, set, c.kind, c.rows, c.cols, c.batch, c.start, c.end)
			}
		})
	}
}

// checkMatMulRows runs one MatMulRows case on misaligned buffers and compares the whole
// output buffer, including the elements that must stay untouched, with the portable loop.
func checkMatMulRows(t *testing.T, rng *rand.Rand, set kernelSet, kind dataKind, rows, cols, batch, start, end int) {
	t.Helper()
	w := at(rows*cols, rng.IntN(8))
	x := at(batch*cols, rng.IntN(8))
	fill(rng, kind, w)
	secondOperand(rng, kind, x)
	got := at(batch*rows, rng.IntN(8))
	for i := range got {
		got[i] = math.Float32frombits(0x7f8abcde) // a NaN pattern: untouched outputs keep it
	}
	want := slices.Clone(got)
	matMulRowsGeneric(want, w, x, rows, cols, batch, start, end)
	set.matMulRows(got, w, x, rows, cols, batch, start, end)
	requireSameResults(t, want, got, onlyDefaultNaN(w, x),
		fmt.Sprintf("%s rows=%d cols=%d batch=%d [%d,%d)", kind, rows, cols, batch, start, end))
}

func TestAxpyMatchesGeneric(t *testing.T) {
	scalars := append([]float32{0.75, -3}, specialValues...)
	for _, set := range allSets() {
		t.Run(set.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 3))
			for _, kind := range allKinds {
				for _, n := range testLengths {
					for off := range 8 {
						a := scalars[rng.IntN(len(scalars))]
						if kind == kindNaNPayloads && rng.IntN(4) == 0 {
							a = math.Float32frombits(nanPayloads[rng.IntN(len(nanPayloads))])
						}
						x := at(n+off%2, (off+3)%8)
						fill(rng, kind, x)
						got := at(n, off)
						fill(rng, kind, got)
						strict := onlyDefaultNaN(x, got, []float32{a})
						want := slices.Clone(got)
						axpyGeneric(want, a, x)
						set.axpy(got, a, x)
						requireSameResults(t, want, got, strict,
							fmt.Sprintf("%s n=%d a=%v", kind, n, a))
					}
				}
			}
		})
	}
}

// TestAxpyAliasing: Axpy with x and dst overlapping, in both directions, gives the plain
// loop's result (the fast path hands x-before-dst overlaps to the portable code).
func TestAxpyAliasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 7, 8, 9, 31, 33, 64, 100} {
		for shift := -9; shift <= 9; shift++ {
			buf := make([]float32, n+20)
			fill(rng, kindNormal, buf)
			ref := slices.Clone(buf)
			dstAt, xAt := 10, 10+shift
			Axpy(buf[dstAt:dstAt+n], 0.5, buf[xAt:xAt+n])
			axpyGeneric(ref[dstAt:dstAt+n], 0.5, ref[xAt:xAt+n])
			requireSameResults(t, ref, buf, true, fmt.Sprintf("n=%d x=dst%+d", n, shift))
		}
	}
}

// TestMatMulRowsAliasing: MatMulRows writing into its own weights or inputs gives the
// plain loop's result.
func TestMatMulRowsAliasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const rows, cols, batch = 6, 9, 3
	for _, intoW := range []bool{true, false} {
		for outAt := 0; outAt < 40; outAt += 3 {
			buf := make([]float32, 120)
			fill(rng, kindNormal, buf)
			ref := slices.Clone(buf)
			run := func(b []float32, f func(out, w, x []float32, rows, cols, batch, start, end int)) {
				w, x := b[0:rows*cols], b[60:60+batch*cols]
				if !intoW {
					w, x = b[60:60+rows*cols], b[0:batch*cols]
				}
				f(b[outAt:outAt+batch*rows], w, x, rows, cols, batch, 0, rows)
			}
			run(buf, MatMulRows)
			run(ref, matMulRowsGeneric)
			requireSameResults(t, ref, buf, true, fmt.Sprintf("intoW=%v out at %d", intoW, outAt))
		}
	}
}

// TestDotSelf: Dot(x, x), as RMSNorm uses it.
func TestDotSelf(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, n := range testLengths {
		x := make([]float32, n)
		fill(rng, kindNormal, x)
		require.Equal(t, math.Float32bits(dotGeneric(x, x)), math.Float32bits(Dot(x, x)), "n=%d", n)
	}
}

// TestPanics: the exported kernels panic on short inputs, as the plain loops do, and
// like them they reslice within capacity: a short slice whose capacity covers the access
// does not panic, and gives the plain loop's result.
func TestPanics(t *testing.T) {
	x := make([]float32, 9)
	require.Panics(t, func() { Dot(x, x[:8:8]) }, "Dot with len(y) < len(x)")
	require.Panics(t, func() { Axpy(x, 1, x[:8:8]) }, "Axpy with len(x) < len(dst)")
	w := make([]float32, 4*9)
	out := make([]float32, 2*4)
	in := make([]float32, 2*9)
	require.Panics(t, func() { MatMulRows(out, w[:30:30], in, 4, 9, 2, 0, 4) }, "MatMulRows with a short w")
	require.Panics(t, func() { MatMulRows(out, w, in[:17:17], 4, 9, 2, 0, 4) }, "MatMulRows with a short x")
	require.Panics(t, func() { MatMulRows(out[:7:7], w, in, 4, 9, 2, 0, 4) }, "MatMulRows with a short out")
	require.Panics(t, func() { MatMulRows(out, w, in, 4, 9, 2, -1, 4) }, "MatMulRows with start < 0")
	require.NotPanics(t, func() { MatMulRows(out, w, in, 4, 9, 2, 2, 2) }, "MatMulRows with an empty row range")

	// Within capacity: the plain loop's result, in every path.
	rng := rand.New(rand.NewPCG(7, 7))
	fill(rng, kindNormal, w)
	fill(rng, kindNormal, in)
	want := slices.Clone(out)
	matMulRowsGeneric(want, w[:30], in[:17], 4, 9, 2, 0, 4)
	MatMulRows(out, w[:30], in[:17], 4, 9, 2, 0, 4)
	requireSameResults(t, want, out, true, "MatMulRows with short slices whose capacity covers the access")
	fill(rng, kindNormal, x)
	require.Equal(t, math.Float32bits(dotGeneric(x[:9], x[:8])), math.Float32bits(Dot(x[:9], x[:8])))
}
