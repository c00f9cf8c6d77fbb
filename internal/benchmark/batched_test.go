package benchmark

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
)

// TestParseLlamaBatchedBench reads a real llama-batched-bench --output-format jsonl
// output (llama.cpp c392e50 on stories260K.gguf, -c 1024 -npp 32 -ntg 4 -npl 2 -t 2),
// with the lines around the JSON that it prints.
func TestParseLlamaBatchedBench(t *testing.T) {
	data, err := os.ReadFile("testdata/llama-batched-bench-stories260K.jsonl")
	require.NoError(t, err)
	rs, err := ParseLlamaBatchedBench(data)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	r := rs[0]
	require.Equal(t, 32, r.PP)
	require.Equal(t, 4, r.TG)
	require.Equal(t, 2, r.PL)
	require.Equal(t, 72, r.NKV)
	require.InDelta(t, 172.240250, r.SpeedPP, 1e-9)
	require.InDelta(t, 4.464249, r.SpeedTG, 1e-9)
	require.InDelta(t, float64(r.PL*r.TG)/r.TTG, r.SpeedTG, 1e-3, "S_TG is PL·TG over T_TG")

	_, err = ParseLlamaBatchedBench([]byte(`{"pp": 32, "tg": 4, "pl": 2, "speed_pp": 0, "speed_tg": 1}`))
	require.ErrorContains(t, err, "speed_pp 0")
	_, err = ParseLlamaBatchedBench([]byte(`{"pp": 32,`))
	require.ErrorContains(t, err, "not its JSON result")
}

// fakeBatchedBench writes a script that behaves like llama-batched-bench --output-format
// jsonl: it records its arguments and reports S_PP 1000 and S_TG 10·pl.
func fakeBatchedBench(t *testing.T) (script, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	body := `#!/bin/sh
echo "$@" >> ` + argsFile + `
while [ $# -gt 0 ]; do case "$1" in -npp) pp=$2;; -ntg) tg=$2;; -npl) pl=$2;; esac; shift; done
echo "main: n_kv_max = 1"
echo "{\"pp\": $pp, \"tg\": $tg, \"pl\": $pl, \"t_pp\": 1, \"speed_pp\": 1000, \"t_tg\": 1, \"speed_tg\": $((pl * 10))}"
`
	script = filepath.Join(dir, "llama-batched-bench")
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	return script, argsFile
}

// TestCompareBatched runs kvref on a tiny synthetic model against a fake
// llama-batched-bench: the engines alternate, llama.cpp gets the same point, threads and
// cache type, and each row's ratios are kvref's rates over llama.cpp's.
func TestCompareBatched(t *testing.T) {
	shape, err := synth.ShapeByName("tiny")
	require.NoError(t, err)
	m, err := shape.Model()
	require.NoError(t, err)
	defer m.Close()
	script, argsFile := fakeBatchedBench(t)
	points := []BatchedPoint{{Depth: 12, Gen: 3, Batch: 1}, {Depth: 12, Gen: 3, Batch: 4}}
	var progress strings.Builder
	c, err := CompareBatched(context.Background(), m, BatchedConfig{Setup: Setup{Threads: 1}, Model: "x.gguf",
		Llama: LlamaBatchedBench{Path: script, CacheType: "q8_0", FlashAttn: true}, Points: points, Rounds: 2,
		PrefillBudget: 20, BandwidthBytes: 1 << 20, Progress: &progress})
	require.NoError(t, err)
	args, err := os.ReadFile(argsFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(args)), "\n")
	require.Len(t, lines, 4, "two points, two rounds")
	require.Equal(t, "-m x.gguf -c 256 -npp 12 -ntg 3 -npl 4 -t 1 --output-format jsonl -ctk q8_0 -ctv q8_0 -fa", lines[1])
	// The engine that goes first alternates from point to point.
	log := progress.String()
	first := func(p string) bool {
		return strings.Index(log, "llama-batched-bench "+p) < strings.Index(log, "kvref "+p)
	}
	require.True(t, first("D=12 N=3 B=1"))
	require.False(t, first("D=12 N=3 B=4"))

	require.Len(t, c.Rows, 2)
	for i, r := range c.Rows {
		require.Len(t, r.Kvref, 2)
		require.Len(t, r.Llama, 2)
		for k := range 2 {
			kv := r.Kvref[k]
			require.InDelta(t, kv.SpeedTG/float64(10*r.Batch), r.RatioTG[k], 1e-12)
			require.InDelta(t, kv.SpeedPP/1000, r.RatioPP[k], 1e-12)
			require.InDelta(t, float64(r.Batch*r.Depth)/kv.PrefillSeconds, kv.SpeedPP, 1e-6*kv.SpeedPP)
			require.InDelta(t, float64(r.Batch*r.Gen)/kv.DecodeSeconds, kv.SpeedTG, 1e-6*kv.SpeedTG)
			require.Positive(t, kv.BandwidthGBs)
			require.InDelta(t, kv.GBPerSecond/kv.BandwidthGBs, kv.BandwidthFraction, 1e-12)
			// Each step reads every sequence's keys and values: B · (D+1 .. D+N) positions.
			meanLen := int64(r.Depth) + 1 + int64(r.Gen-1)/2
			require.Equal(t, int64(r.Batch)*meanLen*kv.BytesPerToken, kv.CacheBytesPerStep, "point %d", i)
		}
		require.Equal(t, Median(r.RatioTG), r.RatioTGMedian)
	}
	var out strings.Builder
	WriteBatchedComparison(&out, c)
	require.Contains(t, out.String(), "S_TG kvref/llama")
	require.Contains(t, out.String(), "   12    3   4   40.0 [40.0–40.0]")

	_, err = CompareBatched(context.Background(), m, BatchedConfig{Model: "x.gguf", Llama: LlamaBatchedBench{Path: script},
		Points: []BatchedPoint{{Depth: m.Config.Context, Gen: 3, Batch: 1}}, Rounds: 1})
	require.ErrorContains(t, err, "more than the model's context")
}

func TestLlamaBatchedCacheType(t *testing.T) {
	for ct, fa := range map[string]bool{"f32": false, "f16": false, "bf16": false, "q8_0": true, "q4_0": true} {
		got, gotFA, err := LlamaBatchedCacheType(ct)
		require.NoError(t, err)
		require.Equal(t, ct, got)
		require.Equal(t, fa, gotFA, ct)
	}
	_, _, err := LlamaBatchedCacheType("fp8-e4m3")
	require.ErrorContains(t, err, "no llama.cpp equivalent")
	require.Equal(t, 256, LlamaBatchedContext(BatchedPoint{Depth: 12, Gen: 3, Batch: 4}))
	require.Equal(t, 15872, LlamaBatchedContext(BatchedPoint{Depth: 960, Gen: 32, Batch: 16}))
}
