package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/loadgen"
)

// TestLoadgenAgainstKvrefServer runs the workload against kvref's own server on the
// built-in model, flags after the URL: every request succeeds, each gets its G tokens, and the JSON
// carries benchmark_serving.py's names.
func TestLoadgenAgainstKvrefServer(t *testing.T) {
	srv := serveKvrefWith(t, "", engine.Config{Threads: 1}) // the built-in stories260K
	jsonFile := filepath.Join(t.TempDir(), "r.json")
	out, stderr, code := kvref(t, "loadgen", srv, "--concurrency", "3", "--requests", "5", "--shared", "24", "--unique", "4",
		"--gen", "6", "--vocab", "200", "--json-file", jsonFile)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "Successful requests:                     5\n")
	require.Contains(t, out, "Mean TTFT (ms):")
	data, err := os.ReadFile(jsonFile)
	require.NoError(t, err)
	var r loadgen.Report
	require.NoError(t, json.Unmarshal(data, &r))
	require.Equal(t, 5, r.Completed)
	require.Equal(t, 30, r.TotalOutputTokens, "G tokens each, ignore_eos")
	require.Equal(t, 5*28, r.TotalInputTokens)
	require.Greater(t, r.OutputThroughput, 0.0)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	for _, k := range []string{"request_throughput", "output_throughput", "mean_ttft_ms", "median_tpot_ms", "p99_itl_ms"} {
		require.Contains(t, raw, k)
	}

	_, stderr, code = kvref(t, "loadgen", srv, "--", "true")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "only with --cold-start")
	_, stderr, code = kvref(t, "loadgen")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "give the server's URL")
}
