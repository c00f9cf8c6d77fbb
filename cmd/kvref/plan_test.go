package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/pages"
	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// workedExampleArgs is the design sketch's example: 32 layers, 8 KV heads of 128, f16,
// 4096-token sequences, 80 GB of memory and 14 GB of weights.
var workedExampleArgs = []string{"plan", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--heads", "32",
	"--cache-dtype", "f16", "--ctx", "4096", "--mem", "80GB", "--weights", "14GB"}

// planJSONOf runs kvref plan --json with args and parses the output.
func planJSONOf(t *testing.T, args ...string) plan.JSON {
	t.Helper()
	out, stderr, code := kvref(t, append(append([]string{"plan"}, args...), "--json")...)
	require.Equal(t, 0, code, stderr)
	var p plan.JSON
	require.NoError(t, json.Unmarshal([]byte(out), &p), out)
	return p
}

// TestPlanWorkedExample checks the design sketch's numbers through the command, in text and
// in JSON: 128 KiB per token, 0.5 GiB per 4096-token sequence, 122 sequences in 66 GB.
func TestPlanWorkedExample(t *testing.T) {
	out, stderr, code := kvref(t, workedExampleArgs...)
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		"per token           128.00 KiB  2 · 32 layers · 8 KV heads · 128 · 2 B = 131072 B",
		"per sequence        512.00 MiB  4096 tokens × 131072 B",
		"in blocks           512.00 MiB  256 blocks of 16 tokens, 2.00 MiB each",
		"memory               74.51 GiB  --mem 80GB = 80000000000 B",
		"weights              13.04 GiB  --weights 14GB = 14000000000 B",
		"left for the cache   61.47 GiB  66000000000 B = 31471 blocks of 2.00 MiB",
		"max sequences              122  full 4096-token sequences at once",
		"  with GQA         8  128.00 KiB    512.00 MiB        122",
		"  without         32  512.00 KiB      2.00 GiB         30",
		"without GQA a token costs 4× the bytes",
		"  f16 *     2 B                       128.00 KiB    512.00 MiB        122",
		"  q8_0      34 B per 32 values         68.00 KiB    272.00 MiB        231",
		// ggml's 4- and 5-bit blocks: 2 · 32 layers · (8·128/32 blocks) · 18, 20, 18, 22 or
		// 24 B; 66e9 B / (16 tokens × per token) blocks, 256 blocks per sequence.
		"  q4_0      18 B per 32 values         36.00 KiB    144.00 MiB        437",
		"  q4_1      20 B per 32 values         40.00 KiB    160.00 MiB        393",
		"  iq4_nl    18 B per 32 values         36.00 KiB    144.00 MiB        437",
		"  q5_0      22 B per 32 values         44.00 KiB    176.00 MiB        357",
		"  q5_1      24 B per 32 values         48.00 KiB    192.00 MiB        327",
		"  2048 tokens            128         128        244",
	} {
		require.Contains(t, out, want)
	}

	p := planJSONOf(t, workedExampleArgs[1:]...)
	require.Equal(t, int64(131072), p.BytesPerToken)
	require.Equal(t, int64(1<<29), p.BytesPerSequence)
	require.Equal(t, int64(1<<29), p.BlockBytesPerSequence)
	require.Equal(t, 256, p.BlocksPerSequence)
	require.Equal(t, int64(80e9), p.MemoryBytes)
	require.Equal(t, int64(14e9), p.WeightsBytes)
	require.Equal(t, int64(66e9), p.LeftBytes)
	require.Equal(t, int64(122), p.MaxSequences)
	require.Equal(t, int64(30), p.WithoutGQA.MaxSequences)
	require.Equal(t, 4*p.BytesPerToken, p.WithoutGQA.BytesPerToken, "heads/kv_heads = 4")
	require.Len(t, p.CacheTypes, len(quant.CacheTypes()))
	require.Equal(t, []plan.PrefixJSON{
		{Tokens: 0, SharedBlocks: 0, OwnBlocks: 256, MaxSequences: 122}, {Tokens: 1024, SharedBlocks: 64, OwnBlocks: 192, MaxSequences: 163}, {Tokens: 2048, SharedBlocks: 128, OwnBlocks: 128, MaxSequences: 244}, {Tokens: 3072, SharedBlocks: 192, OwnBlocks: 64, MaxSequences: 488},
	}, p.SharedPrefix)

	// The raw JSON carries the names the brief promises.
	out, _, _ = kvref(t, append(workedExampleArgs, "--json")...)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, key := range []string{"bytes_per_token", "bytes_per_sequence", "max_sequences", "without_gqa", "cache_types", "shared_prefix"} {
		require.Contains(t, raw, key)
	}
}

// TestPlanPresets checks the llama-2-7b numbers (512 KiB per token, 2 GiB per 4096-token
// sequence in f16), that every preset plans, and the preset list.
func TestPlanPresets(t *testing.T) {
	p := planJSONOf(t, "--preset", "llama-2-7b", "--mem", "80GB")
	require.Equal(t, int64(512<<10), p.BytesPerToken)
	require.Equal(t, int64(2<<30), p.BytesPerSequence)
	require.Equal(t, 4096, p.Context)
	require.Equal(t, int64(6_738_415_616), p.Model.Parameters)
	require.Equal(t, int64(2*6_738_415_616), p.WeightsBytes, "an f16 estimate by default")
	require.Equal(t, (int64(80e9)-p.WeightsBytes)/(2<<30), p.MaxSequences)
	require.Equal(t, p.MaxSequences, p.WithoutGQA.MaxSequences, "llama-2-7b has no GQA")

	out, stderr, code := kvref(t, "plan", "--preset", "llama-2-7b", "--mem", "80GB")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "per token           512.00 KiB  2 · 32 layers · 32 KV heads · 128 · 2 B = 524288 B")
	require.Contains(t, out, "per sequence          2.00 GiB")
	require.Contains(t, out, "GQA: none")

	for _, name := range plan.PresetNames() {
		t.Run(name, func(t *testing.T) {
			p := planJSONOf(t, "--preset", name, "--mem", "1TB")
			pre, err := plan.LookupPreset(name)
			require.NoError(t, err)
			s := pre.Shape
			cfg := kvcache.Config{Layers: s.Layers, KVHeads: s.KVHeads, HeadDim: s.HeadDim, KType: quant.F16, VType: quant.F16}
			require.Equal(t, cfg.BytesPerToken(), p.BytesPerToken)
			require.Equal(t, s.Context, p.Context, "the preset's context by default")
			require.Greater(t, p.MaxSequences, int64(0))
		})
	}

	for _, args := range [][]string{{"plan", "--list"}, {"plan", "--preset", "list"}} {
		out, stderr, code := kvref(t, args...)
		require.Equal(t, 0, code, stderr)
		for _, name := range plan.PresetNames() {
			require.Contains(t, out, name)
		}
		require.Contains(t, out, "meta-llama/Llama-2-7b-hf")
		require.Contains(t, out, "num_key_value_heads")
		require.Contains(t, out, "llama-3-8b          32     32         8       128     8192     128.00 KiB       8.03B")
	}
}

// TestPlanCacheTypesAgreeWithKVCache checks, through the command, that every --cache-dtype
// (and a K/V mix) gives the bytes per token kvcache allocates, and that the JSON table
// rows agree with the headline of the same type.
func TestPlanCacheTypesAgreeWithKVCache(t *testing.T) {
	for _, ct := range quant.CacheTypes() {
		p := planJSONOf(t, "--preset", "llama-3-8b", "--mem", "80GB", "--cache-dtype", ct.String())
		cfg := kvcache.Config{Layers: 32, KVHeads: 8, HeadDim: 128, KType: ct, VType: ct}
		require.Equal(t, cfg.BytesPerToken(), p.BytesPerToken, ct.String())
		row := p.CacheTypes[ct]
		require.Equal(t, ct.String(), row.CacheTypeK)
		require.Equal(t, p.BytesPerToken, row.BytesPerToken)
		require.Equal(t, p.MaxSequences, row.MaxSequences)
	}
	p := planJSONOf(t, "--preset", "llama-3-8b", "--mem", "80GB", "--cache-type-k", "q8_0", "--cache-type-v", "f16")
	cfg := kvcache.Config{Layers: 32, KVHeads: 8, HeadDim: 128, KType: quant.Q8_0, VType: quant.F16}
	require.Equal(t, cfg.BytesPerToken(), p.BytesPerToken)
	require.Equal(t, "q8_0", p.CacheTypeK)
	require.Equal(t, "f16", p.CacheTypeV)

	out, _, code := kvref(t, "plan", "--preset", "llama-3-8b", "--mem", "80GB", "--cache-dtype", "int8")
	require.Equal(t, 0, code)
	require.Contains(t, out, "32 layers × (1056 B K row + 1056 B V row) = 67584 B", "scaled types spell out their rows")
}

// TestPlanSharedPrefix checks that sharing a prefix fits more sequences, with --shared-prefix
// choosing the one prefix to compare.
func TestPlanSharedPrefix(t *testing.T) {
	args := append(append([]string(nil), workedExampleArgs[1:]...), "--shared-prefix", "1000")
	p := planJSONOf(t, args...)
	require.Equal(t, []plan.PrefixJSON{{Tokens: 0, SharedBlocks: 0, OwnBlocks: 256, MaxSequences: 122}, {Tokens: 1000, SharedBlocks: 62, OwnBlocks: 194, MaxSequences: (31471 - 62) / 194}}, p.SharedPrefix)
	require.Greater(t, p.SharedPrefix[1].MaxSequences, p.MaxSequences)

	p = planJSONOf(t, append(append([]string(nil), workedExampleArgs[1:]...), "--shared-prefix", "0")...)
	require.Equal(t, []plan.PrefixJSON{{Tokens: 0, SharedBlocks: 0, OwnBlocks: 256, MaxSequences: 122}}, p.SharedPrefix)
}

// TestPlanWeights checks where the weights' bytes come from: --weights, --weights-dtype,
// the f16 default, and the real tensors of a GGUF file.
func TestPlanWeights(t *testing.T) {
	p := planJSONOf(t, "--preset", "llama-3-8b", "--mem", "80GB", "--weights-dtype", "q4_0")
	require.Equal(t, int64(8_030_261_248)/32*18, p.WeightsBytes)
	require.Contains(t, p.WeightsFrom, "q4_0 estimate")

	p = planJSONOf(t, "--preset", "llama-3-8b", "--mem", "80GB", "--weights-dtype", "q6_k")
	require.Equal(t, (int64(8_030_261_248)*210+255)/256, p.WeightsBytes)

	p = planJSONOf(t, "--preset", "stories15m", "--mem", "1GiB", "--weights", "60MB")
	require.Equal(t, int64(60e6), p.WeightsBytes)
	require.Equal(t, int64(1<<30-60e6), p.LeftBytes)

	// Shape flags with the whole shape: the f16 estimate; without it: weights not counted.
	p = planJSONOf(t, "--layers", "22", "--heads", "32", "--kv-heads", "4", "--head-dim", "64", "--hidden", "5632", "--vocab", "32000", "--mem", "8GB")
	require.Equal(t, int64(1_100_048_384), p.Model.Parameters, "TinyLlama's shape by flags")
	require.Equal(t, int64(2*1_100_048_384), p.WeightsBytes)
	out, stderr, code := kvref(t, "plan", "--layers", "22", "--kv-heads", "4", "--head-dim", "64", "--mem", "8GB")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "note: the weights are not counted")
	require.Contains(t, out, "note: context 4096 is a default")
	require.Contains(t, out, "GQA: give --heads")

	// A real GGUF file: its shape, its context and the bytes of its tensors.
	path := filepath.Join(testutil.ModuleRoot(t), "testdata", "tiny.gguf")
	m, err := model.LoadGGUF(path)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	p = planJSONOf(t, "-m", path, "--mem", "1GiB", "--cache-dtype", "f32", "--block-size", "3")
	c := m.Config
	cfg := kvcache.Config{Layers: c.Layers, KVHeads: c.KVHeads, HeadDim: c.HeadDim, BlockSize: 3, KType: quant.F32, VType: quant.F32}
	require.Equal(t, cfg.BytesPerToken(), p.BytesPerToken)
	require.Equal(t, int64(cfg.BlocksFor(c.Context))*cfg.BytesPerBlock(), p.BlockBytesPerSequence)
	require.Equal(t, c.Context, p.Context)
	require.Equal(t, m.Weights.Bytes(), p.WeightsBytes)
	require.Equal(t, "the file's tensors", p.WeightsFrom)
	require.Equal(t, (int64(1<<30)-m.Weights.Bytes())/p.BlockBytesPerSequence, p.MaxSequences)
}

// TestPlanDefaultMemory checks that without --mem the plan uses this machine's available
// memory, or says to give --mem where that cannot be read.
func TestPlanDefaultMemory(t *testing.T) {
	avail, source, err := pages.AvailableMemory()
	if err != nil {
		_, stderr, code := kvref(t, "plan", "--preset", "stories15m")
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "--mem SIZE")
		return
	}
	p := planJSONOf(t, "--preset", "stories15m")
	require.Contains(t, p.MemoryFrom, "this machine's "+source)
	require.InDelta(t, float64(avail), float64(p.MemoryBytes), float64(avail)/4, "memory moves a little between reads")
}

// TestPlanErrors checks each mistake gets exit status 1 or 2 and a message that says what
// to do.
func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no model", []string{"--mem", "8GB"}, 1, []string{"say which model to plan", "--preset NAME", "llama-2-7b"}},
		{"unknown preset", []string{"--preset", "gpt-5"}, 1, append([]string{`unknown preset "gpt-5"`}, plan.PresetNames()...)},
		{"missing shape flags", []string{"--layers", "32", "--mem", "8GB"}, 1, []string{"missing --kv-heads, --head-dim"}},
		{"two sources", []string{"--preset", "llama-3-8b", "--layers", "32", "--mem", "8GB"}, 1, []string{"give only one of -m, --preset and the shape flags"}},
		{"weights exceed memory", []string{"--preset", "llama-3.1-70b", "--mem", "80GB"}, 1, []string{
			"the weights need 131.42 GiB (f16 estimate: 70553706496 parameters × 16 bits) but the memory is 74.51 GiB (--mem 80GB = 80000000000 B)",
			"nothing is left for the KV cache", "40.00 GiB (320.00 KiB per token)"}},
		{"both weights flags", []string{"--preset", "llama-3-8b", "--mem", "80GB", "--weights", "1GB", "--weights-dtype", "q4_0"}, 1, []string{"not both"}},
		{"weights dtype without shape", []string{"--layers", "2", "--kv-heads", "1", "--head-dim", "8", "--mem", "8GB", "--weights-dtype", "q4_0"}, 1, []string{"needs the parameter count"}},
		{"unknown weights dtype", []string{"--preset", "llama-3-8b", "--mem", "80GB", "--weights-dtype", "q2"}, 1, []string{`unknown weights type "q2"`}},
		{"unknown cache dtype", []string{"--preset", "llama-3-8b", "--mem", "80GB", "--cache-dtype", "f12"}, 1, []string{`unknown cache type "f12"`}},
		{"q8_0 misfit", []string{"--layers", "2", "--kv-heads", "1", "--head-dim", "8", "--mem", "8GB", "--cache-dtype", "q8_0"}, 1, []string{"multiple of 32"}},
		{"prefix too long", []string{"--preset", "llama-3-8b", "--mem", "80GB", "--shared-prefix", "8192"}, 1, []string{"at least one token of its own"}},
		{"bad heads", []string{"--layers", "2", "--heads", "6", "--kv-heads", "4", "--head-dim", "8", "--mem", "8GB"}, 1, []string{"cannot be grouped"}},
		{"missing model file", []string{"-m", "/nonexistent/model.gguf", "--mem", "8GB"}, 1, []string{"/nonexistent/model.gguf"}},
		{"junk mem", []string{"--preset", "llama-3-8b", "--mem", "lots"}, 2, []string{`invalid value "lots" for --mem`, "80GiB"}},
		{"junk weights", []string{"--preset", "llama-3-8b", "--weights", "-3GB"}, 2, []string{`invalid value "-3GB" for --weights`}},
		{"stray argument", []string{"--preset", "llama-3-8b", "extra"}, 1, []string{"unexpected arguments"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := kvref(t, append([]string{"plan"}, tc.args...)...)
			require.Equal(t, tc.code, code, stderr)
			require.Empty(t, out)
			for _, w := range tc.want {
				require.Contains(t, stderr, w)
			}
		})
	}

	// A memory that holds the weights but not one sequence is a plan with 0 sequences and a note.
	out, stderr, code := kvref(t, "plan", "--preset", "llama-3.1-70b", "--mem", "150GB")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "max sequences                0")
	require.Contains(t, out, "note: not one full 131072-token sequence fits")
	require.NotContains(t, out, "-1")
}

// TestPlanHelp checks the help text explains the formula and the size units.
func TestPlanHelp(t *testing.T) {
	out, stderr, code := kvref(t, "plan", "-h")
	require.Equal(t, 0, code)
	require.Empty(t, out)
	for _, want := range []string{
		"usage: kvref plan [-m MODEL | --preset NAME | --layers L --kv-heads H --head-dim D [--heads Q]]",
		"bytes per token = 2 · layers · kv_heads · head_dim · bytes_per_element",
		"80GB = 80G = 80·10^9 bytes, 80GiB = 80Gi = 80·2^30 bytes",
		"-mem SIZE", "-weights SIZE",
		"-shared-prefix", "-weights-dtype", "q6_k (6.5625 bits)",
	} {
		require.Contains(t, stderr, want)
	}
	require.True(t, strings.Contains(stderr, "kvref plan --list"))
}

// TestPlanAcceptsEveryModelFormat: plan -m opens what run -m opens: the same synthetic model
// as a GGUF file, a Hugging Face directory and a llama2.c checkpoint plans to the same
// bytes per token, context and weight bytes.
func TestPlanAcceptsEveryModelFormat(t *testing.T) {
	dir := t.TempDir()
	var plans []plan.JSON
	for _, f := range []struct{ format, out string }{
		{"gguf", filepath.Join(dir, "m.gguf")},
		{"hf", filepath.Join(dir, "hf")},
		{"llama2c", filepath.Join(dir, "l2c", "model.bin")},
	} {
		_, stderr, code := kvref(t, "synth", "-o", f.out, "--format", f.format, "--vocab", "512")
		require.Equal(t, 0, code, stderr)
		p := planJSONOf(t, "-m", f.out, "--mem", "1GiB", "--cache-dtype", "f16")
		require.Equal(t, f.out, p.Model.Name)
		plans = append(plans, p)
	}
	for _, p := range plans[1:] {
		require.Equal(t, plans[0].BytesPerToken, p.BytesPerToken)
		require.Equal(t, plans[0].Context, p.Context)
		require.Equal(t, plans[0].MaxSequences, p.MaxSequences)
	}
	require.Equal(t, "safetensors model", plans[1].Model.From)
	_, stderr, code := kvref(t, "plan", "-m", filepath.Join(dir, "nothing-here"))
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "nothing-here")
}
