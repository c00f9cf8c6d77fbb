package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/kvref/kvref/internal/half"
)

// rowKind is one of the three stored row formats of the row dots.
type rowKind struct {
	name       string
	blockLen   int // values per block (1 for halves: any length)
	blockBytes int // bytes per block
	generic    func(x []float32, row []byte) float32
	decode     func(row []byte, n int) []float32 // the row as float32, as quant's DequantizeRow decodes it
}

var rowKinds = []rowKind{
	{"f16", 1, 2, dotF16Generic, decodeHalves(half.F16ToF32)},
	{"bf16", 1, 2, dotBF16Generic, decodeHalves(half.BF16ToF32)},
}

// rowBytes is the size of a row of n values.
func (k rowKind) rowBytes(n int) int { return n / k.blockLen * k.blockBytes }

func decodeHalves(conv func(uint16) float32) func(row []byte, n int) []float32 {
	return func(row []byte, n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = conv(uint16(row[2*i]) | uint16(row[2*i+1])<<8)
		}
		return v
	}
}

// rowDotSet is one implementation of the row dots.
type rowDotSet struct {
	name string
	dot  map[string]func(x []float32, row []byte) float32
	rows map[string]func(out, x []float32, w []byte)
	// raw sets are the assembly kernels called directly: rows hold exactly the row's
	// bytes, and out does not overlap x or w.
	raw bool
}

// exportedRowSet is the package API, whatever path it dispatches to now.
var exportedRowSet = rowDotSet{
	name: "exported",
	dot:  map[string]func(x []float32, row []byte) float32{"f16": DotF16, "bf16": DotBF16},
	rows: map[string]func(out, x []float32, w []byte){"f16": DotF16Rows, "bf16": DotBF16Rows},
}

// rowImpls names each row format's kernel in the registry, for use.
var rowImpls = map[string]*impl{"f16": implF16AVX2, "bf16": implBF16AVX2}

// levelRowSet is exportedRowSet with the kernels restricted to one level for each call,
// recording which implementations ran.
func levelRowSet(level string) rowDotSet {
	s := rowDotSet{name: level, dot: map[string]func(x []float32, row []byte) float32{}, rows: map[string]func(out, x []float32, w []byte){}}
	for name, dot := range exportedRowSet.dot {
		s.dot[name] = func(x []float32, row []byte) float32 {
			defer atLevel(level)()
			use(rowImpls[name])
			return dot(x, row)
		}
	}
	for name, rows := range exportedRowSet.rows {
		s.rows[name] = func(out, x []float32, w []byte) {
			defer atLevel(level)()
			use(rowImpls[name])
			rows(out, x, w)
		}
	}
	return s
}

// allRowSets returns the row dots at every level this CPU has (testLevels) and, when this
// build and CPU have them, the assembly kernels called directly.
func allRowSets() []rowDotSet {
	var sets []rowDotSet
	for _, l := range testLevels() {
		sets = append(sets, levelRowSet(l))
	}
	fast, _ := fastRowSets()
	return append(sets, fast...)
}

// halfKind names a family of stored 16-bit values (halves or bfloat16) or scales.
type halfKind string

const (
	halfNormal  halfKind = "normal"  // values of N(0, 1), or scales about 1/127
	halfBits    halfKind = "bits"    // any bit pattern: Inf, NaN payloads, subnormals, ±0
	halfExtreme halfKind = "extreme" // largest finite, smallest subnormal, ±Inf, ±0, default NaN
	halfSub     halfKind = "sub"     // subnormal halves only (for bfloat16: tiny floats)
)

var halfKinds = []halfKind{halfNormal, halfBits, halfExtreme, halfSub}

// halfPattern returns one 16-bit pattern of the kind for format f ("bf16" or anything else
// for IEEE halves).
func halfPattern(rng *rand.Rand, kind halfKind, f string, scale float32) uint16 {
	bf := f == "bf16"
	conv := func(v float32) uint16 {
		if bf {
			return uint16(math.Float32bits(v) >> 16)
		}
		return float16.Fromfloat32(v).Bits()
	}
	switch kind {
	case halfNormal:
		return conv(float32(rng.NormFloat64()) * scale)
	case halfBits:
		return uint16(rng.Uint32())
	case halfExtreme:
		ext := []uint16{0x7bff, 0xfbff, 0x0001, 0x8001, 0x7c00, 0xfc00, 0x0000, 0x8000, 0xfe00, 0x03ff, 0x0400, 0x3c00}
		if bf {
			ext = []uint16{0x7f7f, 0xff7f, 0x0001, 0x8001, 0x7f80, 0xff80, 0x0000, 0x8000, 0xffc0, 0x007f, 0x0080, 0x3f80}
		}
		return ext[rng.IntN(len(ext))]
	case halfSub:
		if bf {
			return uint16(rng.Uint32N(0x80)) | uint16(rng.Uint32N(2))<<15
		}
		return uint16(rng.Uint32N(0x400)) | uint16(rng.Uint32N(2))<<15
	}
	panic("unknown half kind " + kind)
}

// putLE16 stores h little-endian at b[0:2].
func putLE16(b []byte, h uint16) { b[0], b[1] = byte(h), byte(h>>8) }

// fillRow writes a row of n values of format k: halves of the kind, or blocks whose scales
// are of the kind and whose quantized values are random (with, for halfExtreme, the
// extreme codes −128, 127 and 0, 15 more often).
func fillRow(rng *rand.Rand, k rowKind, kind halfKind, row []byte, n int) {
	if k.blockLen == 1 {
		for i := range n {
			putLE16(row[2*i:], halfPattern(rng, kind, k.name, 1))
		}
		return
	}
	for b := range n / k.blockLen {
		blk := row[b*k.blockBytes : (b+1)*k.blockBytes]
		putLE16(blk, halfPattern(rng, kind, "f16", 1.0/64))
		for j := 2; j < len(blk); j++ {
			blk[j] = byte(rng.Uint32())
			if kind == halfExtreme && rng.IntN(3) == 0 {
				blk[j] = []byte{0x80, 0x7f, 0x00, 0xff, 0xf0, 0x0f}[rng.IntN(6)]
			}
		}
	}
}

// byteBuf returns n bytes starting off bytes into a fresh buffer (so that the row is
// misaligned), followed by guard bytes.
func byteBuf(n, off int) []byte {
	buf := make([]byte, off+n+16)
	for i := range buf {
		buf[i] = 0xa5
	}
	return buf[off : off+n : off+n]
}

// rowLengths returns the test lengths of a row format: any length for halves, whole
// blocks for the quantized formats.
func (k rowKind) lengths() []int {
	if k.blockLen == 1 {
		return testLengths
	}
	return []int{0, 32, 64, 96, 160, 4096}
}

// rowXKinds are the input vectors the row dots are tested with.
var rowXKinds = []dataKind{kindNormal, kindWide, kindSpecial, kindMixed, kindSubnormal, kindNearOverflow, kindNaNPayloads}

// TestRowDotGenericIsDot: the portable row dots are Dot of the decoded row, bit for bit
// (NaN bits excepted when the inputs hold NaNs other than the default one).
func TestRowDotGenericIsDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for _, k := range rowKinds {
		for _, hk := range halfKinds {
			for _, xk := range rowXKinds {
				for _, n := range k.lengths() {
					x := at(n, rng.IntN(8))
					fill(rng, xk, x)
					row := byteBuf(k.rowBytes(n), rng.IntN(4))
					fillRow(rng, k, hk, row, n)
					v := k.decode(row, n)
					want := dotGeneric(x, v)
					got := k.generic(x, row)
					if !sameResult(want, got, onlyDefaultNaN(x, v)) {
						require.Failf(t, "row dot differs from Dot of the decoded row",
							"%s %s x=%s n=%d: Dot %v (%#08x), row dot %v (%#08x)",
							k.name, hk, xk, n, want, math.Float32bits(want), got, math.Float32bits(got))
					}
				}
			}
		}
	}
}

// TestRowDotsMatchGeneric: every row dot of every set gives the portable result, on
// misaligned inputs and rows, for inputs and rows with overflow, subnormals, infinities
// and NaNs.
func TestRowDotsMatchGeneric(t *testing.T) {
	for _, set := range allRowSets() {
		t.Run(set.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(12, 12))
			for _, k := range rowKinds {
				for _, hk := range halfKinds {
					for _, xk := range rowXKinds {
						for _, n := range k.lengths() {
							for off := range 8 {
								if n > 300 && off%3 != 0 {
									continue
								}
								x := at(n, off)
								fill(rng, xk, x)
								rb := k.rowBytes(n)
								extra := 0
								if !set.raw {
									extra = off % 2 * k.blockBytes // the row may be longer than needed
								}
								row := byteBuf(rb+extra, (off*5)%8)
								fillRow(rng, k, hk, row, n+extra/k.blockBytes*k.blockLen)
								want := k.generic(x, row[:rb])
								got := set.dot[k.name](x, row)
								if !sameResult(want, got, onlyDefaultNaN(x, k.decode(row, n))) {
									require.Failf(t, "fast and portable row dots differ",
										"%s %s x=%s n=%d off=%d: portable %v (%#08x), fast %v (%#08x)",
										k.name, hk, xk, n, off, want, math.Float32bits(want), got, math.Float32bits(got))
								}
							}
						}
					}
				}
			}
		})
	}
}

// TestRowDotsRowsMatchGeneric: the *Rows forms give one portable row dot per output (the
// four-row blocks and the single rows after them), and leave the rest of out alone.
func TestRowDotsRowsMatchGeneric(t *testing.T) {
	for _, set := range allRowSets() {
		t.Run(set.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(13, 13))
			for _, k := range rowKinds {
				ns := []int{0, 32, 64, 4096}
				if k.blockLen == 1 {
					ns = []int{0, 1, 7, 8, 9, 31, 32, 33, 64, 100, 4097}
				}
				for _, hk := range []halfKind{halfNormal, halfBits, halfExtreme} {
					for _, n := range ns {
						for rows := 0; rows <= 9; rows++ {
							if n > 1000 && rows%4 != 1 {
								continue
							}
							x := at(n, rng.IntN(8))
							fill(rng, kindMixed, x)
							rb := k.rowBytes(n)
							w := byteBuf(rows*rb, rng.IntN(8))
							fillRow(rng, k, hk, w, rows*n)
							got := at(rows+2, rng.IntN(8))
							for i := range got {
								got[i] = math.Float32frombits(0x7f8abcde)
							}
							want := slices.Clone(got)
							rowsGeneric(want[1:rows+1], x, w, rb, k.generic)
							set.rows[k.name](got[1:rows+1], x, w)
							requireSameResults(t, want, got, onlyDefaultNaN(x, k.decode(w, rows*n)),
								fmt.Sprintf("%s %s n=%d rows=%d", k.name, hk, n, rows))
						}
					}
				}
			}
		})
	}
}

// TestRowDotEdgeCases pins down a few results exactly, in every path.
func TestRowDotEdgeCases(t *testing.T) {
	half := func(hs ...uint16) []byte {
		b := make([]byte, 2*len(hs))
		for i, h := range hs {
			putLE16(b[2*i:], h)
		}
		return b
	}
	inf := float32(math.Inf(1))
	for _, set := range allRowSets() {
		t.Run(set.name, func(t *testing.T) {
			for _, c := range []struct {
				name string
				kind string
				x    []float32
				row  []byte
				want float32
			}{
				{"empty", "f16", nil, nil, 0},
				{"largest half", "f16", []float32{1, 1}, half(0x7bff, 0x7bff), 131008},
				{"smallest subnormal half", "f16", []float32{1}, half(0x0001), 0x1p-24},
				{"0 · Inf half", "f16", []float32{0}, half(0x7c00), defaultNaN},
				{"Inf half", "f16", []float32{2, 0, 0, 0, 0, 0, 0, 0, 1}, half(0x7c00, 0, 0, 0, 0, 0, 0, 0, 0x3c00), inf},
				{"bf16 largest", "bf16", []float32{1}, half(0x7f7f), math.Float32frombits(0x7f7f0000)},
				{"bf16 overflow", "bf16", []float32{2}, half(0x7f7f), inf},
				{"bf16 subnormal", "bf16", []float32{1}, half(0x0001), math.Float32frombits(0x00010000)},
			} {
				got := set.dot[c.kind](c.x, c.row)
				require.Equalf(t, math.Float32bits(c.want), math.Float32bits(got), "%s: got %v want %v", c.name, got, c.want)
			}
		})
	}
}

// TestRowDotPanics: short rows and partial blocks panic, in every build.
func TestRowDotPanics(t *testing.T) {
	x := make([]float32, 33)
	require.Panics(t, func() { DotF16(x, make([]byte, 65)) }, "DotF16 with a short row")
	require.Panics(t, func() { DotBF16(x, make([]byte, 65)) }, "DotBF16 with a short row")
	out := make([]float32, 5)
	require.Panics(t, func() { DotF16Rows(out, x, make([]byte, 5*66-1)) }, "DotF16Rows with short weights")
	require.NotPanics(t, func() { DotF16Rows(nil, x, nil) }, "no rows")
}

// TestRowDotsRowsAliasing: *Rows writing into its own input vector or weights gives the
// plain loop's result (out[r] written before row r+1 is read).
func TestRowDotsRowsAliasing(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implF16AVX2)
		rng := rand.New(rand.NewPCG(14, 14))
		for _, k := range rowKinds {
			n := 64
			rb := k.rowBytes(n)
			const rows = 9
			for _, intoW := range []bool{false, true} {
				for outAt := 0; outAt < 80; outAt += 7 {
					buf := make([]float32, 200+rows*rb/4)
					fill(rng, kindNormal, buf)
					bytes := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 4*len(buf))
					// x at floats 0..63 and the weights from float 100 on; out overlaps x or w.
					fillRow(rng, k, halfNormal, bytes[400:400+rows*rb], rows*n)
					ref := slices.Clone(buf)
					refBytes := unsafe.Slice((*byte)(unsafe.Pointer(&ref[0])), 4*len(ref))
					at := outAt
					if intoW {
						at += 100
					}
					rowsGeneric(ref[at:at+rows], ref[:n], refBytes[400:400+rows*rb], rb, k.generic)
					exportedRowSet.rows[k.name](buf[at:at+rows], buf[:n], bytes[400:400+rows*rb])
					requireSameResults(t, ref, buf, onlyDefaultNaN(ref), fmt.Sprintf("%s intoW=%v out at %d", k.name, intoW, at))
				}
			}
		}
	})
}

// BenchmarkRowDots multiplies a 2048 × 2048 matrix stored in each format by one vector
// (a batch-1 matrix–vector product: "rows" is the *Rows kernel, "row" one row dot per row).
// Throughput is bytes of weights read per second.
func BenchmarkRowDots(b *testing.B) {
	const rows, cols = 2048, 2048
	rng := rand.New(rand.NewPCG(15, 15))
	x := randomFloats(cols, 16)
	out := make([]float32, rows)
	for _, k := range rowKinds {
		rb := k.rowBytes(cols)
		w := make([]byte, rows*rb)
		fillRow(rng, k, halfNormal, w, rows*cols)
		for _, impl := range []struct {
			name string
			run  func()
		}{
			{"generic", func() { rowsGeneric(out, x, w, rb, k.generic) }},
			{"row", func() {
				for r := range out {
					out[r] = exportedRowSet.dot[k.name](x, w[r*rb:(r+1)*rb])
				}
			}},
			{"rows", func() { exportedRowSet.rows[k.name](out, x, w) }},
		} {
			b.Run(k.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					impl.run()
				}
			})
		}
	}
}

// FuzzRowDotsMatchGeneric feeds arbitrary bytes to every row dot of every set: the first
// part of the input is x (float32 bit patterns, NaNs and infinities included), the rest
// the stored row (halves, bfloat16, or blocks with any scales). The fast results must be
// the portable ones (NaN bits excepted when NaNs other than the default one are about),
// and the portable ones Dot of the decoded row.
func FuzzRowDotsMatchGeneric(f *testing.F) {
	f.Add(slices.Repeat([]byte{0x00, 0x7c, 0x01, 0x80}, 40), uint8(0))
	f.Add(slices.Repeat([]byte{0xff, 0x7b, 0x80, 0x7f, 0x0f}, 80), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, kindIn uint8) {
		k := rowKinds[int(kindIn)%len(rowKinds)]
		// n values need 4n bytes of x and rowBytes(n) bytes of row.
		per := 4*k.blockLen + k.blockBytes
		n := len(data) / per * k.blockLen
		x := floatsFrom(data[:4*n])
		row := data[4*n : 4*n+k.rowBytes(n)]
		v := k.decode(row, n)
		strict := onlyDefaultNaN(x, v)
		want := k.generic(x, row)
		d := dotGeneric(x, v)
		if !sameResult(d, want, strict) { // tested before require: this runs in a hot loop
			require.FailNow(t, fmt.Sprintf("%s n=%d: portable row dot %#08x, Dot of the decoded row %#08x", k.name, n, math.Float32bits(want), math.Float32bits(d)))
		}
		for _, set := range allRowSets() {
			got := set.dot[k.name](x, row)
			if !sameResult(want, got, strict) { // tested before require: this runs in a hot loop
				require.FailNow(t, fmt.Sprintf("%s: %s n=%d: portable %#08x, fast %#08x", set.name, k.name, n, math.Float32bits(want), math.Float32bits(got)))
			}
			if n == 0 {
				continue
			}
			// Five rows: the same row five times, so a four-row block and a single row.
			w := slices.Repeat(row, 5)
			out := make([]float32, 5)
			set.rows[k.name](out, x, w)
			for r, got := range out {
				if !sameResult(want, got, strict) { // tested before require: this runs in a hot loop
					require.FailNow(t, fmt.Sprintf("%s: %s rows n=%d row %d: portable %#08x, fast %#08x", set.name, k.name, n, r, math.Float32bits(want), math.Float32bits(got)))
				}
			}
		}
	})
}
