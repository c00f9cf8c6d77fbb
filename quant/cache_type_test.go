package quant

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCacheTypeNames(t *testing.T) {
	t.Parallel()

	want := []string{"f32", "f16", "bf16", "int8", "fp8-e4m3", "fp8-e5m2", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}
	types := CacheTypes()
	require.Len(t, types, len(want))
	for i, ct := range types {
		require.Equal(t, CacheType(i), ct)
		require.Equal(t, want[i], ct.String())
		parsed, err := ParseCacheType(ct.String())
		require.NoError(t, err)
		require.Equal(t, ct, parsed)
	}
	require.Equal(t, []CacheType{F32, F16, BF16, Int8, FP8E4M3, FP8E5M2, Q8_0, Q4_0, Q4_1, IQ4_NL, Q5_0, Q5_1}, types)
	require.Equal(t, "CacheType(200)", CacheType(200).String())
}

func TestParseCacheType(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		in   string
		want CacheType
	}{
		{"f32", F32}, {"fp32", F32}, {"F32", F32},
		{"f16", F16}, {"fp16", F16}, {" FP16 ", F16},
		{"bf16", BF16},
		{"int8", Int8},
		{"fp8", FP8E4M3}, {"fp8-e4m3", FP8E4M3},
		{"fp8-e5m2", FP8E5M2},
		{"q8_0", Q8_0}, {"Q8_0", Q8_0},
		// llama.cpp's -ctk/-ctv spellings, as llama-server prints them.
		{"q4_0", Q4_0}, {"Q4_0", Q4_0}, {"q4_1", Q4_1}, {"iq4_nl", IQ4_NL}, {"IQ4_NL", IQ4_NL},
		{"q5_0", Q5_0}, {"q5_1", Q5_1},
	} {
		got, err := ParseCacheType(c.in)
		require.NoErrorf(t, err, "ParseCacheType(%q)", c.in)
		require.Equalf(t, c.want, got, "ParseCacheType(%q)", c.in)
	}
	for _, bad := range []string{"", "f8", "q4_k", "iq4_xs", "q4", "fp8_e4m3", "int4", "float16"} {
		_, err := ParseCacheType(bad)
		require.Errorf(t, err, "ParseCacheType(%q)", bad)
		require.Contains(t, err.Error(), "unknown cache type")
		for _, name := range []string{"f32", "f16", "bf16", "int8", "fp8-e4m3", "fp8-e5m2", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"} {
			require.Containsf(t, err.Error(), name, "the error for %q should list the valid names", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()

	for _, ct := range CacheTypes() {
		require.NoError(t, ct.Validate(4, 64), ct.String())
		require.Error(t, ct.Validate(0, 64), ct.String())
		require.Error(t, ct.Validate(4, 0), ct.String())
		require.Error(t, ct.Validate(-1, 8), ct.String())
	}
	for _, ct := range []CacheType{F32, F16, BF16, Int8, FP8E4M3, FP8E5M2} {
		require.NoError(t, ct.Validate(3, 8), ct.String())
		require.NoError(t, ct.Validate(1, 7), ct.String())
	}

	for _, ct := range []CacheType{Q8_0, Q4_0, Q4_1, IQ4_NL, Q5_0, Q5_1} {
		err := ct.Validate(3, 8)
		require.Error(t, err, ct.String())
		require.Contains(t, err.Error(), ct.String())
		require.Contains(t, err.Error(), "multiple of 32")
		require.Contains(t, err.Error(), "3*8 = 24")
		require.NoError(t, ct.Validate(4, 8), ct.String()) // stories260K: one block spans 4 heads
		require.NoError(t, ct.Validate(8, 12), ct.String())
		require.NoError(t, ct.Validate(1, 128), ct.String())
		require.Error(t, ct.Validate(1, 48), ct.String())
	}

	require.Error(t, CacheType(99).Validate(1, 32))
}

func TestRowBytes(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		ct               CacheType
		kvHeads, headDim int
		want             int
	}{
		{F32, 8, 128, 4096},
		{F16, 8, 128, 2048},
		{BF16, 8, 128, 2048},
		{FP8E5M2, 8, 128, 1024},
		{Int8, 8, 128, 8 * 132},
		{FP8E4M3, 8, 128, 8 * 132},
		{Q8_0, 8, 128, 32 * 34},
		{Q8_0, 4, 8, 34},
		{Int8, 1, 7, 11},
		// ggml's sizeof(block_q4_0) = 18, block_q4_1 20, block_iq4_nl 18, block_q5_0 22,
		// block_q5_1 24 (ggml-common.h's static asserts), per 32 values.
		{Q4_0, 8, 128, 32 * 18},
		{Q4_1, 8, 128, 32 * 20},
		{IQ4_NL, 8, 128, 32 * 18},
		{Q5_0, 8, 128, 32 * 22},
		{Q5_1, 8, 128, 32 * 24},
		{Q4_0, 4, 8, 18},
		{Q5_1, 2, 64, 4 * 24},
	} {
		require.Equalf(t, c.want, c.ct.RowBytes(c.kvHeads, c.headDim), "%v %dx%d", c.ct, c.kvHeads, c.headDim)
	}
	// The design's worked example: 32 layers, 8 KV heads of 128, fp16: 128 KiB per token.
	require.Equal(t, 128<<10, 2*32*F16.RowBytes(8, 128))
	require.PanicsWithError(t, Q8_0.Validate(3, 8).Error(), func() { Q8_0.RowBytes(3, 8) })
}

func TestWrongSizesPanic(t *testing.T) {
	t.Parallel()

	x := make([]float32, 64)
	row := make([]byte, F16.RowBytes(2, 32))
	require.Panics(t, func() { F16.Encode(row[:len(row)-1], x, 2, 32) })
	require.Panics(t, func() { F16.Encode(append(row, 0), x, 2, 32) })
	require.Panics(t, func() { F16.Decode(x[:63], row, 2, 32) })
	require.Panics(t, func() { F16.DotHead(x[:32], row, 2, 2, 32) })
	require.Panics(t, func() { F16.DotHead(x[:31], row, 0, 2, 32) })
	require.Panics(t, func() { F16.AxpyHead(x[:32], 1, row[:10], 0, 2, 32) })
	require.NotPanics(t, func() { F16.DotHead(x[:32], row, 1, 2, 32) })
}

// TestParseCacheTypes: the per-type names override the shared one, an empty one falls back
// to it, and a bad name is an error naming the valid ones.
func TestParseCacheTypes(t *testing.T) {
	t.Parallel()

	k, v, err := ParseCacheTypes("f16", "", "")
	require.NoError(t, err)
	require.Equal(t, [2]CacheType{F16, F16}, [2]CacheType{k, v})
	k, v, err = ParseCacheTypes("f16", "q8_0", " ")
	require.NoError(t, err)
	require.Equal(t, [2]CacheType{Q8_0, F16}, [2]CacheType{k, v})
	k, v, err = ParseCacheTypes("f32", "", "int8")
	require.NoError(t, err)
	require.Equal(t, [2]CacheType{F32, Int8}, [2]CacheType{k, v})
	_, _, err = ParseCacheTypes("f16", "", "f12")
	require.ErrorContains(t, err, "q8_0")
}

// TestCacheFormatsAreComplete: every row of cacheFormats has a unique name, exactly one
// layout and the decoder that layout reads through, and an encoder; a fused read of a
// head exists only for the per-head layout, which is the one that hands it a head's bytes.
func TestCacheFormatsAreComplete(t *testing.T) {
	t.Parallel()

	names := map[string]CacheType{}
	for _, ct := range CacheTypes() {
		f := ct.format()
		require.NotEmpty(t, f.name, "%d", ct)
		for _, n := range append([]string{f.name}, f.aliases...) {
			prev, dup := names[n]
			require.False(t, dup, "%q names both %v and %v", n, prev, ct)
			names[n] = ct
		}
		require.NotNil(t, f.encode, "%v", ct)
		if f.blockBytes > 0 {
			require.Zero(t, f.valueBytes+f.headScale, "%v: one layout", ct)
			require.NotNil(t, f.decodeRange, "%v", ct)
			require.True(t, f.decodeHead == nil && f.decodeRow == nil && f.dotHead == nil && f.axpyHead == nil, "%v: a block type reads ranges", ct)
		} else {
			require.Positive(t, f.valueBytes, "%v: a layout", ct)
			require.NotNil(t, f.decodeHead, "%v", ct)
			require.Nil(t, f.decodeRange, "%v", ct)
			require.False(t, f.decodeRow != nil && f.headScale != 0, "%v: decodeRow is for rows that are their heads' values", ct)
		}
	}
}
