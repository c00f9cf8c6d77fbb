package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/benchmark"
	"github.com/kvref/kvref/internal/nodellama"
	"github.com/kvref/kvref/internal/testutil"
)

// TestBenchVsNodeLlamaCpp runs kvref bench --vs-node-llama-cpp on stories260K, two short
// rounds, and checks the comparison's shape: both tests on both engines every round, the
// ratio of each round kvref's rate over llama.cpp's, f16 caches, and bench.mjs's thread
// accounting present for every round. It asserts no speed (timing is for benchmarks).
func TestBenchVsNodeLlamaCpp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node-llama-cpp")
	}
	dir := nodellama.Require(t, nodellama.ToolDir(testutil.ModuleRoot(t)))
	model := testutil.Shared(t, "models/stories260K.gguf")
	out, stderr, code := kvref(t, "bench", "-m", model, "--vs-node-llama-cpp", dir, "--tg", "8", "--prefill", "32", "--rounds", "2", "--reps", "1", "-t", "1", "--json")
	require.Equal(t, 0, code, stderr)
	var r struct {
		Comparison struct {
			CacheType  string `json:"cache_type"`
			Threads    int    `json:"threads"`
			Rounds     int    `json:"rounds"`
			LlamaBuild string `json:"llama_build"`
			Tests      []struct {
				Name   string    `json:"test"`
				Llama  []float64 `json:"llama_cpp_tokens_per_second"`
				Kvref  []float64 `json:"kvref_tokens_per_second"`
				Ratios []float64 `json:"ratios"`
			} `json:"tests"`
		} `json:"comparison"`
		Threads map[string][]benchmark.NodeBenchTest `json:"node_llama_cpp_threads"`
		Loads   []float64                            `json:"node_llama_cpp_load_seconds"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	c := r.Comparison
	require.Equal(t, "f16", c.CacheType)
	require.Equal(t, 1, c.Threads)
	require.Equal(t, 2, c.Rounds)
	require.Contains(t, c.LlamaBuild, "node-llama-cpp 3.22.1")
	require.Contains(t, c.LlamaBuild, "llama.cpp v0.5.0")
	require.Len(t, c.Tests, 2)
	require.Equal(t, "pp32", c.Tests[0].Name)
	require.Equal(t, "tg8", c.Tests[1].Name)
	for _, tr := range c.Tests {
		require.Len(t, tr.Ratios, 2, tr.Name)
		for i := range tr.Ratios {
			require.Positive(t, tr.Llama[i], tr.Name)
			require.Positive(t, tr.Kvref[i], tr.Name)
			require.InDelta(t, tr.Kvref[i]/tr.Llama[i], tr.Ratios[i], 1e-9, tr.Name)
		}
		require.Len(t, r.Threads[tr.Name], 2, "thread accounting for every round of %s", tr.Name)
	}
	require.Len(t, r.Loads, 2)

	_, stderr, code = kvref(t, "bench", "-m", model, "--vs-node-llama-cpp", t.TempDir(), "--rounds", "1")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "node_modules/node-llama-cpp/package.json is not installed")
}
