package quant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

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
// little-endian float32 with NaNs made canonical by float32Bytes). For q8_0, q4_0, q4_k
// and q6_k they come from ggml's C (see above). For the other types they come from
// llama.cpp's llama-quantize (../shared/bin, c392e50): the corpus rows in a tensor of a
// synthetic model, quantized with --pure, and dequantized by requantizing that file to F32
// with --allow-requantize. Those lists stop before the last row, "huge", whose fp16 scales
// overflow: llama-quantize refuses to write such a tensor (and kvref quantize does too).
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
	WeightQ4_1: {
		quant: []string{"e028cc71b4cf7c1b", "759772c766228384", "dffc97dc175f97e6", "fd3d28aae8c61931", "92bfd36c7e941ed8", "51d18eeba4a8f450",
			"039482640de6ea25", "2f6e5e55ae8c4e9c", "f7007a96a0d0e1b6", "855eb32a0ff4cdd6", "81f7abda8a93f6eb"},
		dequant: []string{"e085344fc341d112", "814d19af4e938399", "9b01e1463b9d4410", "a878d0f2951ccf3b", "22f0f7920b4d8127", "c9dfac54a6688188",
			"c672925bafc246c9", "8faaeb03732c3bf9", "db4b41fcd0d9a2a2", "3a9276c897b02209", "9b6018c877d19380"},
	},
	WeightQ5_0: {
		quant: []string{"0fdb906db3729f90", "bb260af342621368", "3084e3c1a3033fdc", "0f13a03f06edda9d", "87c9fb96adda8069", "744db98692d7ec8a",
			"43b23ae87b4603c3", "a01c06d0d5eec4b7", "9ce5461b60632b44", "c5e2612c911245f9", "e60ef11c2e7feb9f"},
		dequant: []string{"32b0b80b13d3ba5d", "c17cb90606b1ad7c", "10c36f5d48d821d3", "4448cdf56428ea06", "4a88a6f3a227d3f8", "24633a015d98f1ca",
			"53eb0f83ccf96549", "bef0788714d97957", "d35e60219502eeba", "cf4c3ece3215e704", "87cb82a775cd58d5"},
	},
	WeightQ5_1: {
		quant: []string{"45894308afbb34df", "c90b95469ee2a6eb", "cb1987c22309ad55", "ebd3bbada8805e95", "7153a992c5ee5308", "c9db50bde98e4fde",
			"1bdee73e898e2439", "aab357c4d365b8b3", "6cc78c3cd4f1c815", "ffb836ff4d69e3a8", "ec1b5f53290fa4c9"},
		dequant: []string{"451055670e4f777f", "6a62204deb5155f7", "6ea8e8860bab167e", "952adf8ede19fbf0", "3d650817a77b8b72", "46b7c4b3aac496a7",
			"dcf942496f71c9d6", "8faaeb03732c3bf9", "db4b41fcd0d9a2a2", "d48a7752d57db8c7", "efb44d5373e243e3"},
	},
	WeightQ2_K: {
		quant: []string{"8dccd05af921e858", "cce42fa664ec10f1", "cf10c835d5d1154a", "bcb3b8d88706b17a", "06dbcb77ba8be28f", "0d95278684e3a80a",
			"b38cb7a18767ac2f", "c0ac9a9a6c497dea", "effa755d9a6040ef", "0dae2ce887d33cb7", "f6d7156fcb6d95a5"},
		dequant: []string{"bea55ce5f46c3b71", "0786efb8c62db24b", "557ea020e1e6972c", "1c2649792684a5f2", "657c1a3953b6d94f", "1e04b4a92a27a256",
			"3e34f4c0fa04d39b", "78e6ba40a31862d0", "75d2b9d7a26550f0", "a4aa540c1f71975b", "80c56ca0fa504585"},
	},
	WeightQ3_K: {
		quant: []string{"2178fbead6eb7c06", "49f3038478ac680d", "10de72853d635166", "e1cafbaedbac4e53", "257a7596d962f313", "67b82ec5657404da",
			"0c9813b04784d4ba", "ec731a5e0f16af25", "93b1010588223039", "cd6fea5b4a3b1cc8", "729f4c2152582dd4"},
		dequant: []string{"b9f1e01c757f70e8", "838fdf336ae53f6d", "e231393f4094746a", "9ab7a65c3da317c1", "b14203b3712d0ddf", "878dc8b9cada12f4",
			"99c58550184d3e5b", "9c19b61b1efaa805", "db4b41fcd0d9a2a2", "810de4f46678c325", "1b91c2a18e15a2e5"},
	},
	WeightQ5_K: {
		quant: []string{"eeb73c92c292a791", "6345f98c7dc27e42", "f5be1317ae37a67f", "2aaed9767a40ebd5", "131ddd820a43cb96", "9f44ffb02595eb85",
			"aaa14d0e5d91dab0", "b7de6d65abd50c94", "0041dfee3e2249e2", "e6cd2b9a7ea5c780", "88f9932c0864c1f0"},
		dequant: []string{"2440cbe53d8cce06", "994aabc92482a204", "a3edb85de24a13c9", "f1e88b8b50a11eef", "efb16426897c1bc6", "ef841d096c672c34",
			"b00413831c66d413", "c615816270f64743", "8859fddc1d19f983", "625180d8e6cc6e84", "7dbdf8a33ec15e36"},
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
	t.Parallel()

	rows := goldenCorpus()
	for _, wt := range WeightTypes() {
		want := goldenHashes[wt]
		n := len(rows)
		if len(want.quant) == n-1 { // no golden for the "huge" row (see goldenHashes)
			n--
		}
		require.Len(t, want.quant, n, "%v", wt)
		require.Len(t, want.dequant, n, "%v", wt)
		rb, err := wt.RowBytes(goldenRowLen)
		require.NoError(t, err)
		for k, row := range rows[:n] {
			q := make([]byte, rb)
			wt.QuantizeRow(q, row)
			require.Equal(t, want.quant[k], shortHash(q), "%v row %q: bytes differ from ggml's", wt, goldenRowKinds[k].name)
			y := make([]float32, goldenRowLen)
			wt.DequantizeRow(y, q)
			require.Equal(t, want.dequant[k], shortHash(float32Bytes(y)), "%v row %q: dequantized values differ from ggml's", wt, goldenRowKinds[k].name)
		}
	}
}
