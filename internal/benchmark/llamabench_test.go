package benchmark

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseLlamaBench reads a real llama-bench -o json output (llama.cpp c392e50 on
// stories260K.gguf, -p 16 -n 8 -t 1 -r 2): two tests, pp16 and tg8.
func TestParseLlamaBench(t *testing.T) {
	t.Parallel()

	data, err := os.ReadFile("testdata/llama-bench-stories260K.json")
	require.NoError(t, err)
	rs, err := ParseLlamaBench(data)
	require.NoError(t, err)
	require.Len(t, rs, 2)
	require.Equal(t, 16, rs[0].NPrompt)
	require.Equal(t, 0, rs[0].NGen)
	require.InDelta(t, 391.514260, rs[0].AvgTS, 1e-9)
	require.Equal(t, []float64{35.418, 747.61}, rs[0].SamplesTS)
	require.Equal(t, 0, rs[1].NPrompt)
	require.Equal(t, 8, rs[1].NGen)
	require.Equal(t, "AMD EPYC", rs[1].CPUInfo)
	require.Equal(t, "f16", rs[1].TypeK)
	require.Equal(t, 1, rs[1].Threads)

	_, err = ParseLlamaBench([]byte("main: error: failed to load model"))
	require.ErrorContains(t, err, "not its JSON array of tests")
	_, err = ParseLlamaBench([]byte(`[{"n_prompt": 512, "n_gen": 0, "avg_ts": 0}]`))
	require.ErrorContains(t, err, "avg_ts 0")
}

// fakeLlamaBench writes a script that behaves like llama-bench -o json: it records its
// arguments in a file and reports tg at 100 tokens/s and pp at 1000 (or fails, with
// fail set). It returns the script's path and the argument file's.
func fakeLlamaBench(t *testing.T, fail bool) (script, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	body := `#!/bin/sh
echo "$@" >> ` + argsFile + `
p=0; n=0
while [ $# -gt 0 ]; do case "$1" in -p) p=$2;; -n) n=$2;; esac; shift; done
ts=100; [ "$p" -gt 0 ] && ts=1000
`
	if fail {
		body += "echo 'llama_model_load: error loading model' >&2\nexit 1\n"
	}
	body += `echo "[{\"build_commit\": \"fake\", \"cpu_info\": \"Fake CPU\", \"model_type\": \"llama fake\", \"n_prompt\": $p, \"n_gen\": $n, \"avg_ts\": $ts, \"samples_ts\": [$ts]}]"
`
	script = filepath.Join(dir, "llama-bench")
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	return script, argsFile
}

// TestLlamaBenchRun: the arguments llama-bench gets, its result, and its failures.
func TestLlamaBenchRun(t *testing.T) {
	t.Parallel()

	script, argsFile := fakeLlamaBench(t, false)
	lb := LlamaBench{Path: script, Threads: 2, Reps: 3, CacheType: "f16"}
	r, err := lb.Run(context.Background(), "model.gguf", 0, 64)
	require.NoError(t, err)
	require.Equal(t, 100.0, r.AvgTS)
	require.Equal(t, 64, r.NGen)
	r, err = lb.Run(context.Background(), "model.gguf", 512, 0)
	require.NoError(t, err)
	require.Equal(t, 1000.0, r.AvgTS)
	args, err := os.ReadFile(argsFile)
	require.NoError(t, err)
	require.Equal(t, "-m model.gguf -p 0 -n 64 -t 2 -o json -r 3 -ctk f16 -ctv f16\n-m model.gguf -p 512 -n 0 -t 2 -o json -r 3 -ctk f16 -ctv f16\n", string(args))

	_, err = lb.Run(context.Background(), "model.gguf", 512, 64)
	require.ErrorContains(t, err, "not 512 and 64")

	bad, _ := fakeLlamaBench(t, true)
	_, err = LlamaBench{Path: bad}.Run(context.Background(), "model.gguf", 0, 8)
	require.ErrorContains(t, err, "error loading model")

	_, err = LlamaBench{Path: filepath.Join(t.TempDir(), "missing")}.Run(context.Background(), "m.gguf", 0, 8)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "missing"), err.Error())
}

func TestLlamaCacheType(t *testing.T) {
	t.Parallel()

	for _, ct := range []string{"f32", "f16", "bf16"} {
		got, err := LlamaCacheType(ct)
		require.NoError(t, err)
		require.Equal(t, ct, got)
	}
	for _, ct := range []string{"int8", "q8_0", "fp8-e4m3"} {
		_, err := LlamaCacheType(ct)
		require.ErrorContains(t, err, "no llama.cpp equivalent", ct)
	}
}
