package quant

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The golden values in this file were computed by ggml itself, like those of
// weight_golden_test.go: quantize_row_q4_1_ref, quantize_row_q5_0_ref,
// quantize_row_q5_1_ref, quantize_row_iq4_nl_ref and quantize_iq4_nl (both through
// quantize_row_iq4_nl_impl, with ntry −1 and 7), the matching dequantize_row_* functions
// and ggml's fp16 conversions, taken unchanged from ggml/src/ggml-quants.c and
// ggml/src/ggml-impl.h of ggml-org/llama.cpp (commit 01243c587fec) and compiled with gcc -O2
// for x86-64, the way ggml-base is built. The inputs are the rows of goldenCorpus
// (weight_golden_test.go), one 4096-value K/V row each. The same program reproduced
// goldenHashes[WeightQ4_0], which the q4_0 cache shares.

// cacheGoldenHashes holds, per cache type and corpus row, the first 8 bytes (hex) of the
// SHA-256 of ggml's quantized row and of its dequantization (float32Bytes).
var cacheGoldenHashes = map[CacheType]struct{ quant, dequant []string }{
	Q4_0: goldenHashes[WeightQ4_0],
	Q4_1: {
		quant: []string{"e028cc71b4cf7c1b", "759772c766228384", "dffc97dc175f97e6", "fd3d28aae8c61931", "92bfd36c7e941ed8", "51d18eeba4a8f450",
			"039482640de6ea25", "2f6e5e55ae8c4e9c", "f7007a96a0d0e1b6", "855eb32a0ff4cdd6", "81f7abda8a93f6eb", "936f632ba02c4ed2"},
		dequant: []string{"e085344fc341d112", "814d19af4e938399", "9b01e1463b9d4410", "a878d0f2951ccf3b", "22f0f7920b4d8127", "c9dfac54a6688188",
			"c672925bafc246c9", "8faaeb03732c3bf9", "db4b41fcd0d9a2a2", "3a9276c897b02209", "9b6018c877d19380", "ad6b6454c90d30e7"},
	},
	Q5_0: {
		quant: []string{"0fdb906db3729f90", "bb260af342621368", "3084e3c1a3033fdc", "0f13a03f06edda9d", "87c9fb96adda8069", "744db98692d7ec8a",
			"43b23ae87b4603c3", "a01c06d0d5eec4b7", "9ce5461b60632b44", "c5e2612c911245f9", "e60ef11c2e7feb9f", "4c13dfd1f1223913"},
		dequant: []string{"32b0b80b13d3ba5d", "c17cb90606b1ad7c", "10c36f5d48d821d3", "4448cdf56428ea06", "4a88a6f3a227d3f8", "24633a015d98f1ca",
			"53eb0f83ccf96549", "bef0788714d97957", "d35e60219502eeba", "cf4c3ece3215e704", "87cb82a775cd58d5", "a667817cc0b2b0b9"},
	},
	Q5_1: {
		quant: []string{"45894308afbb34df", "c90b95469ee2a6eb", "cb1987c22309ad55", "ebd3bbada8805e95", "7153a992c5ee5308", "c9db50bde98e4fde",
			"1bdee73e898e2439", "aab357c4d365b8b3", "6cc78c3cd4f1c815", "ffb836ff4d69e3a8", "ec1b5f53290fa4c9", "a811ef3946b15e3a"},
		dequant: []string{"451055670e4f777f", "6a62204deb5155f7", "6ea8e8860bab167e", "952adf8ede19fbf0", "3d650817a77b8b72", "46b7c4b3aac496a7",
			"dcf942496f71c9d6", "8faaeb03732c3bf9", "db4b41fcd0d9a2a2", "d48a7752d57db8c7", "efb44d5373e243e3", "ad6b6454c90d30e7"},
	},
	IQ4_NL: {
		quant: []string{"c031ab4b276c27a9", "3446adfca7b4011d", "2709ba6c3a5361a7", "a08df570d91b2f51", "70b7e4d814cb7aba", "f30582c92c3b3863",
			"aff92ae5e44f2bb3", "0254ef6708ff9d9d", "921fb76a8248c182", "8de34d946fe96257", "8c3fc0cc59a4d0bc", "c5f48dc9b5fcf643"},
		dequant: []string{"ad495f64782be0aa", "10301c5520ed8cae", "a2c267b67f25dbf9", "61cc552729b06301", "27558c97867fcf95", "5eeeb7420d6786f7",
			"38370e282d63ed62", "02600893362402d7", "af185f24166081ef", "5b7388c8fb433f18", "82a0d667efdaf07b", "c8ad0677c43ee4c9"},
	},
}

// iq4nlWeightGoldenHashes is ggml's quantize_iq4_nl (ntry = 7, no importance matrix: what
// llama-quantize writes) of the corpus rows, and its dequantization.
var iq4nlWeightGoldenHashes = struct{ quant, dequant []string }{
	quant: []string{"f74a13c66c15f359", "8211112ca17e727e", "66a1f054d022e11e", "c12bb162f0097dc2", "5ce125852e1345ce", "b832d8c357b7443e",
		"64d970b3da084688", "cce8d86992d6bb53", "aa3cb79f23e6fa3c", "633feceedc27f638", "378d1798e27ff4f9", "e039743ba040b00a"},
	dequant: []string{"0ef9ee41cc33552b", "d5f1b1ba1e00294e", "4db2fcfe2c372098", "2063beb2e674f805", "9f0d4a26d581eb3d", "575df7fe297b4156",
		"0954f07ae7c85994", "121b8046752b3170", "dbf3e61739e5fc67", "f022819aafca5440", "c7a3b2bd15e98bda", "0b476862e62c5ea1"},
}

// goldenCacheShape is how the tests store a 4096-value corpus row: 32 heads of 128.
var goldenCacheShape = shape{32, 128}

// TestCacheEncodeMatchesGGMLCorpus encodes and decodes every corpus row (twelve
// distributions, from tiny to fp16-overflowing magnitudes, with ties, constants, zeros,
// outliers and one-signed rows) as each of ggml's 4- and 5-bit cache types and requires
// ggml's exact bytes and floats.
func TestCacheEncodeMatchesGGMLCorpus(t *testing.T) {
	t.Parallel()

	rows := goldenCorpus()
	s := goldenCacheShape
	for ct, want := range cacheGoldenHashes {
		require.Len(t, want.quant, len(rows))
		require.Len(t, want.dequant, len(rows))
		for k, row := range rows {
			q := encodeExact(t, ct, row, s)
			require.Equal(t, want.quant[k], shortHash(q), "%v row %q: bytes differ from ggml's", ct, goldenRowKinds[k].name)
			y := make([]float32, len(row))
			ct.Decode(y, q, s.kvHeads, s.headDim)
			require.Equal(t, want.dequant[k], shortHash(float32Bytes(y)), "%v row %q: decoded values differ from ggml's", ct, goldenRowKinds[k].name)
		}
	}
}

// TestIQ4NLWeightSearchMatchesGGMLCorpus: with ntry = 7, encodeIQ4NL is ggml's weight
// quantizer (the same function as the cache's, plus the scale search and the final
// requantization), and it writes ggml's bytes for every corpus row.
func TestIQ4NLWeightSearchMatchesGGMLCorpus(t *testing.T) {
	t.Parallel()

	for k, row := range goldenCorpus() {
		q := make([]byte, len(row)/blockLen*iq4nlBlockBytes)
		encodeIQ4NL(q, row, iq4nlWeightTries)
		require.Equal(t, iq4nlWeightGoldenHashes.quant[k], shortHash(q), "row %q", goldenRowKinds[k].name)
		y := make([]float32, len(row))
		decodeBlocks(IQ4_NL, y, q)
		require.Equal(t, iq4nlWeightGoldenHashes.dequant[k], shortHash(float32Bytes(y)), "row %q", goldenRowKinds[k].name)
	}
}
