package benchmark

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseNodeBench reads a bench.mjs result and finds its tests by name.
func TestParseNodeBench(t *testing.T) {
	r, err := ParseNodeBench([]byte(`
{"engine":"node-llama-cpp 3.22.1","llama_cpp":"v0.5.0","threads":2,"cache_type":"f16","load_seconds":0.25,
 "tests":[{"test":"pp32","tokens_per_second":400,"busy_threads":2,"thread_shares":[0.9,0.8],"cpu_over_wall":1.7},
          {"test":"tg8","tokens_per_second":50}]}
`))
	require.NoError(t, err)
	require.Equal(t, "node-llama-cpp 3.22.1", r.Engine)
	require.Equal(t, 0.25, r.LoadSeconds)
	pp, err := r.Test("pp32")
	require.NoError(t, err)
	require.Equal(t, 400.0, pp.TokensPerSec)
	require.Equal(t, []float64{0.9, 0.8}, pp.ThreadShares)
	_, err = r.Test("tg64")
	require.ErrorContains(t, err, "no tg64 test (it reported 2 tests)")

	_, err = ParseNodeBench([]byte("Error: no model\n"))
	require.ErrorContains(t, err, "bench.mjs printed no JSON result")
}

// TestNodeCacheType accepts the caches bench.mjs takes and names the rest.
func TestNodeCacheType(t *testing.T) {
	for _, ok := range []string{"f32", "f16", "bf16", "q8_0", "q4_0"} {
		got, err := NodeCacheType(ok)
		require.NoError(t, err, ok)
		require.Equal(t, ok, got)
	}
	_, err := NodeCacheType("q4_k")
	require.ErrorContains(t, err, "not q4_k")
}

// TestNodeComparisonAddRound checks that each round records both rates, kvref's over
// node's as the ratio, and the thread accounting, and that a missing test fails.
func TestNodeComparisonAddRound(t *testing.T) {
	c := NodeComparison{Comparison: Comparison{Tests: []TestResult{{Name: "pp32"}, {Name: "tg8"}}}, Usage: map[string][]NodeBenchTest{}}
	run := &NodeBenchRun{Tests: []NodeBenchTest{{Test: "tg8", TokensPerSec: 50, BusyThreads: 1}, {Test: "pp32", TokensPerSec: 400, BusyThreads: 2}}}
	require.NoError(t, c.addRound(run, []float64{200, 100}))
	require.NoError(t, c.addRound(run, []float64{800, 25}))
	require.Equal(t, []float64{0.5, 2}, c.Tests[0].Ratios)
	require.Equal(t, []float64{2, 0.5}, c.Tests[1].Ratios)
	require.Equal(t, []float64{400, 400}, c.Tests[0].Llama)
	require.Equal(t, []float64{100, 25}, c.Tests[1].Kvref)
	require.Len(t, c.Usage["pp32"], 2)
	require.Equal(t, 2, c.Usage["pp32"][0].BusyThreads)
	require.Error(t, c.addRound(&NodeBenchRun{Tests: run.Tests[:1]}, []float64{1, 1}))
}

// TestCompareNodeNothing refuses a comparison without a test before touching the model.
func TestCompareNodeNothing(t *testing.T) {
	_, err := CompareNode(context.Background(), nil, NodeCompareConfig{Rounds: 1, Reps: 1})
	require.ErrorContains(t, err, "nothing to compare")
}

// TestNodeComparisonWriteText prints the table, then each test's thread accounting per
// round and the median load.
func TestNodeComparisonWriteText(t *testing.T) {
	c := NodeComparison{Comparison: Comparison{Tests: []TestResult{{Name: "tg8"}}}, Usage: map[string][]NodeBenchTest{}}
	require.NoError(t, c.addRound(&NodeBenchRun{Tests: []NodeBenchTest{{Test: "tg8", TokensPerSec: 50, BusyThreads: 2, ThreadShares: []float64{0.9, 0.5}, CPUOverWall: 1.4}}}, []float64{100}))
	c.Loads = []float64{1, 3}
	var b strings.Builder
	c.WriteText(&b)
	require.Contains(t, b.String(), "\n  tg8     2 busy [0.9 0.5], process 1.40\n")
	require.True(t, strings.HasSuffix(b.String(), "node-llama-cpp load (process start excluded): median 2.00 s\n"), b.String())
}
