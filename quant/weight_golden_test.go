package quant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The golden values in this file were computed by ggml itself: the functions
// quantize_row_q8_0_ref, quantize_row_q4_0_ref, quantize_row_q4_K_ref (with
// make_qkx2_quants), quantize_row_q6_K_ref (with make_qx_quants), dequantize_row_q8_0,
// dequantize_row_q4_0, dequantize_row_q4_K and dequantize_row_q6_K, and ggml's
// GGML_FP32_TO_FP16/GGML_FP16_TO_FP32, taken unchanged from ggml/src/ggml-quants.c and
// ggml/src/ggml-impl.h of ggml-org/llama.cpp (commit 01243c587fec) and compiled with
// gcc -O2 for x86-64, the way ggml-base (which holds them) is built. The inputs are the
// rows goldenCorpus generates, written as little-endian float32. (The same C compiled
// with -march=native, so that gcc contracts a*b+c into FMA instructions, gives different
// bytes in 13 of the 192 q4_k super-blocks and 3 of the 192 q6_k ones; q8_0 and q4_0
// are unaffected.)

// goldenRNG is a 64-bit xorshift* generator: integer-only, so the rows it makes are the
// same bits on every platform.
type goldenRNG struct{ s uint64 }

func (r *goldenRNG) next() uint64 {
	r.s ^= r.s >> 12
	r.s ^= r.s << 25
	r.s ^= r.s >> 27
	return r.s * 2685821657736338717
}

// uniform returns a multiple of 2^-23 in [-1, 1).
func (r *goldenRNG) uniform() float32 { return float32(int32(r.next()>>32)>>8) * 0x1p-23 }

// bell returns the sum of four uniforms: mean 0, variance 4/3, bell-shaped.
func (r *goldenRNG) bell() float32 { return r.uniform() + r.uniform() + r.uniform() + r.uniform() }

func absf32(f float32) float32 {
	if f < 0 {
		return -f
	}
	return f
}

const goldenRowLen = 4096

// goldenRowKinds are the value distributions of the golden corpus, one row each.
var goldenRowKinds = []struct {
	name string
	gen  func(r *goldenRNG, i int) float32
}{
	{"bell", func(r *goldenRNG, i int) float32 { return r.bell() }},
	{"weights", func(r *goldenRNG, i int) float32 { return r.bell() * 0.02 }},
	{"uniform", func(r *goldenRNG, i int) float32 { return r.uniform() * 3.7 }},
	{"outliers", func(r *goldenRNG, i int) float32 {
		if v := r.bell(); i%300 != 7 {
			return v
		} else {
			return v * 50
		}
	}},
	{"sparse", func(r *goldenRNG, i int) float32 {
		if r.next()%10 != 0 {
			return 0
		}
		return r.bell()
	}},
	{"positive", func(r *goldenRNG, i int) float32 { return absf32(r.bell()) + 0.5 }},
	{"negative", func(r *goldenRNG, i int) float32 { return -absf32(r.bell()) }},
	{"constant blocks", func(r *goldenRNG, i int) float32 { return float32(i/32%17-8) * 0.25 }},
	{"constant super-blocks", func(r *goldenRNG, i int) float32 { return float32(i/256%9-4) * 1.5 }},
	{"integers", func(r *goldenRNG, i int) float32 { return float32(int(r.next()%33) - 16) }},
	{"tiny", func(r *goldenRNG, i int) float32 { return r.bell() * 0x1p-20 }},
	{"huge", func(r *goldenRNG, i int) float32 { return r.bell() * 0x1p24 }},
}

// goldenCorpus returns the rows of the golden corpus, in goldenRowKinds order.
func goldenCorpus() [][]float32 {
	rows := make([][]float32, len(goldenRowKinds))
	for k, kind := range goldenRowKinds {
		r := &goldenRNG{s: 0x9e3779b97f4a7c15 ^ uint64(k+1)}
		row := make([]float32, goldenRowLen)
		for i := range row {
			row[i] = kind.gen(r, i)
		}
		rows[k] = row
	}
	return rows
}

// goldenHashes holds, per weight type and corpus row, the first 8 bytes (hex) of the
// SHA-256 of ggml's quantized row (quant) and of ggml's dequantization of it (dequant,
// little-endian float32 with NaNs made canonical by float32Bytes).
var goldenHashes = map[WeightType]struct{ quant, dequant []string }{
	WeightQ8_0: {
		quant: []string{"8f3191a8364d89bb", "4670f27f84484177", "f94380c9ab811318", "c7494c0cf653585e", "e6e7d00043a0dec5", "227279cb7e34c2eb",
			"036e228fd3baa98f", "0e7726dd886a51c1", "5e7e19e86579ca6a", "9913c68ad9c150fe", "3175c858142e73b9", "ffbcc54124b06318"},
		dequant: []string{"900714288c9d28fe", "0c6ecc595f082e67", "5ee385958e241484", "0a063cebe3db6c2a", "9080fb9c855393f5", "fb3f3247f77b7dcd",
			"8f66bb0c77b2745b", "af7df94eb4ae83f0", "faf334881feef669", "4305fc81bfc5dfe5", "1f856a3bcf14c262", "47057333c5b166e1"},
	},
	WeightQ4_0: {
		quant: []string{"05092267ad0ec40a", "8a508eed3c2bfd2e", "a52560dd577dd6c3", "368100eba5054dfd", "9388f950d7a6dedf", "20bee14bf6aa5789",
			"40520901f089c537", "e4a7281ed2e6f94d", "dc96aebeec804cf7", "a601218a4c618342", "1c0524b710639c80", "fb13acc94c2cec49"},
		dequant: []string{"c466856447ec54e0", "71b43a269aa20dec", "4345b97ded98d28d", "5b9afe9ac12c9575", "2ef4715e9033c00e", "452340e0fbb73c10",
			"5339746dfba8a832", "bef0788714d97957", "d35e60219502eeba", "8f1a2cc35bdd6bae", "81e6fea6ce08a14a", "6184d5d3708b2add"},
	},
	WeightQ4_K: {
		quant: []string{"bedce1967a33325b", "9570550ecd035176", "19b14635493e0fe4", "1350fcb97dfa8975", "d990516efdd7eefc", "3c0c54c4b4d04e24",
			"55351e8d4640e17c", "25c1b7755d625163", "b7677ba739c70a23", "ffe2aa790cc711d9", "9722e61fae5e3ec0", "311ee74aa125c16c"},
		dequant: []string{"9e233af2b1aa268d", "aace53c4cd9303c2", "ff360373ba98414a", "bc367fad423c93e9", "3240de90d4120150", "369b364c7fdf8f67",
			"e4a362f9fe6547a7", "bc7ce5a32745c002", "2d37d9f3e2da42eb", "352afa58e9d91d25", "1ca96081d91cfe6c", "ad6b6454c90d30e7"},
	},
	WeightQ6_K: {
		quant: []string{"d972f9590e96b230", "b287dd532f3f2c7d", "372078d8778fc258", "482d2de05dcda110", "88d4482e167bc745", "d479dd9ce8642e54",
			"e0e852b49d158c2e", "f678c5b43b40066d", "742077aa2c2610a2", "1877fe76f78d8c94", "1108d966e86d4d72", "ef56bcfbaeef90de"},
		dequant: []string{"afb9d99255500290", "505dd78fb6ac334d", "69c9a53606cca07d", "ae0485b16b68fb6f", "c7ff3d040f9f2699", "de175f86afdd8be3",
			"50adeaec6bc53ed2", "f5aafb1870200ae0", "d35e60219502eeba", "62731e3131ef945f", "7908af332abbda04", "3faa2c4f01e54dcd"},
	},
}

// shortHash is the first 8 bytes of b's SHA-256, in hex.
func shortHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// float32Bytes returns x as little-endian bytes, every NaN written as 0x7fc00000. (The
// "huge" row's fp16 scales overflow to Inf, and 0·Inf and Inf−Inf make NaNs whose sign
// is the CPU's: x86 creates 0xffc00000, arm64 0x7fc00000.)
func float32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		bits := math.Float32bits(v)
		if v != v {
			bits = 0x7fc00000
		}
		binary.LittleEndian.PutUint32(b[4*i:], bits)
	}
	return b
}

// TestQuantizeRowMatchesGGMLCorpus quantizes and dequantizes every row of the golden
// corpus (twelve distributions, from tiny to fp16-overflowing magnitudes, with ties,
// constants, outliers and one-signed rows) and requires ggml's exact bytes and floats.
func TestQuantizeRowMatchesGGMLCorpus(t *testing.T) {
	rows := goldenCorpus()
	for _, wt := range WeightTypes() {
		want := goldenHashes[wt]
		require.Len(t, want.quant, len(rows))
		require.Len(t, want.dequant, len(rows))
		rb, err := wt.RowBytes(goldenRowLen)
		require.NoError(t, err)
		for k, row := range rows {
			q := make([]byte, rb)
			wt.QuantizeRow(q, row)
			assert.Equal(t, want.quant[k], shortHash(q), "%v row %q: bytes differ from ggml's", wt, goldenRowKinds[k].name)
			y := make([]float32, goldenRowLen)
			wt.DequantizeRow(y, q)
			assert.Equal(t, want.dequant[k], shortHash(float32Bytes(y)), "%v row %q: dequantized values differ from ggml's", wt, goldenRowKinds[k].name)
		}
	}
}
