package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/benchmark"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model/synth"
)

// fakeBatchedBenchScript writes a stand-in llama-batched-bench that reports S_PP 500 and
// S_TG 50 for whatever point it is given, and records its arguments.
func fakeBatchedBenchScript(t *testing.T) (script, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	script, argsFile = filepath.Join(dir, "llama-batched-bench"), filepath.Join(dir, "args")
	body := `#!/bin/sh
echo "$@" >> ` + argsFile + `
while [ $# -gt 0 ]; do case "$1" in -npp) pp=$2;; -ntg) tg=$2;; -npl) pl=$2;; esac; shift; done
echo "{\"pp\": $pp, \"tg\": $tg, \"pl\": $pl, \"t_pp\": 1, \"speed_pp\": 500, \"t_tg\": 1, \"speed_tg\": 50}"
`
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	return script, argsFile
}

// TestBenchVsLlamaBatchedBench: every D × B point runs on both engines with the same
// depth, steps, batch, threads and (f16 by default) cache; the table and --json give
// both rates and their ratios.
func TestBenchVsLlamaBatchedBench(t *testing.T) {
	ggufPath := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, synth.Tiny.WriteFile(ggufPath))
	fake, argsFile := fakeBatchedBenchScript(t)
	args := []string{"bench", "-m", ggufPath, "--vs-llama-batched-bench", fake, "--npp", "8,12", "--ntg", "3", "--npl", "1,2", "-t", "1", "--bandwidth-buffer", "4MiB"}
	out, stderr, code := kvref(t, append(args, "--json")...)
	require.Equal(t, 0, code, stderr)
	var got struct {
		B benchmark.BatchedComparison `json:"batched"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Equal(t, "f16", got.B.CacheType, "llama.cpp's default cache")
	require.Len(t, got.B.Rows, 4)
	for _, r := range got.B.Rows {
		require.Equal(t, 3, r.Gen)
		require.InDelta(t, r.Kvref[0].SpeedTG/50, r.RatioTGMedian, 1e-12)
		require.InDelta(t, r.Kvref[0].SpeedPP/500, r.RatioPPMedian, 1e-12)
		require.Greater(t, r.BandwidthFrac, 0.0)
	}
	data, err := os.ReadFile(argsFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Equal(t, []string{
		"-m " + ggufPath + " -c 256 -npp 8 -ntg 3 -npl 1 -t 1 --output-format jsonl -ctk f16 -ctv f16",
		"-m " + ggufPath + " -c 256 -npp 8 -ntg 3 -npl 2 -t 1 --output-format jsonl -ctk f16 -ctv f16",
		"-m " + ggufPath + " -c 256 -npp 12 -ntg 3 -npl 1 -t 1 --output-format jsonl -ctk f16 -ctv f16",
		"-m " + ggufPath + " -c 256 -npp 12 -ntg 3 -npl 2 -t 1 --output-format jsonl -ctk f16 -ctv f16",
	}, lines)

	out, stderr, code = kvref(t, append(args, "--no-bandwidth", "--npp", "8", "--npl", "2")...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "S_TG kvref/llama")
	require.Contains(t, out, "    8    3   2               50.0")

	_, stderr, code = kvref(t, "bench", "--shape", "tiny", "--vs-llama-batched-bench", fake)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "-m must name a GGUF file")
	_, stderr, code = kvref(t, "bench", "-m", ggufPath, "--vs-llama-batched-bench", fake, "--cache-dtype", "int8")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "no llama.cpp equivalent")
}

// TestBenchVsRealLlamaBatchedBench runs the comparison against llama.cpp's own
// llama-batched-bench (../shared/bin) on the project's tiny model.
func TestBenchVsRealLlamaBatchedBench(t *testing.T) {
	lb := testutil.Shared(t, "bin/llama-batched-bench")
	model := filepath.Join(testutil.ModuleRoot(t), "testdata", "tiny.gguf")
	out, stderr, code := kvref(t, "bench", "-m", model, "--vs-llama-batched-bench", lb, "--npp", "16", "--ntg", "4", "--npl", "2", "-t", "1", "--no-bandwidth", "--json")
	require.Equal(t, 0, code, stderr)
	var got struct {
		B benchmark.BatchedComparison `json:"batched"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got.B.Rows, 1)
	r := got.B.Rows[0]
	require.Equal(t, 2, r.Llama[0].PL)
	require.Equal(t, 16, r.Llama[0].PP)
	require.Equal(t, 1, r.Llama[0].Threads)
	require.Greater(t, r.Llama[0].SpeedTG, 0.0)
	require.Greater(t, r.Kvref[0].SpeedTG, 0.0)
}
