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

// TestBenchBatchLine checks the batch curve's bookkeeping on the tiny shape: every row's
// cache bytes follow the formula (batch · positions attended · bytes per token), the
// weights are counted once per step, and the memory-bound batch the scheduler admits is
// the one the formula predicts.
func TestBenchBatchLine(t *testing.T) {
	out, stderr, code := kvref(t, "bench", "--shape", "tiny", "--batches", "1,3", "--steps", "4", "--prompt", "5", "--cache-mem", "256KiB", "--ctx", "40", "--json")
	require.Equal(t, 0, code, stderr)
	var got struct {
		Batches []benchmark.BatchResult    `json:"batches"`
		MB      benchmark.MemoryBoundBatch `json:"memory_bound_batch"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got.Batches, 2)
	shape, err := synth.ShapeByName("tiny")
	require.NoError(t, err)
	m, err := shape.Model()
	require.NoError(t, err)
	c := m.Config
	bpt := int64(2 * c.Layers * c.KVHeads * c.HeadDim * 4) // f32 cache
	for _, b := range got.Batches {
		require.Equal(t, bpt, b.CacheBytesPerTokenFormula)
		// Every matrix once, of the token-embedding table only the batch's rows (unless the
		// classifier shares it).
		want, e := m.Weights.Bytes(), m.Weights.TokenEmbed
		if m.Weights.Output != e {
			want += -e.Bytes() + int64(b.Batch)*e.Bytes()/int64(e.Rows)
		}
		require.Equal(t, want, b.WeightBytesPerStep, "batch %d", b.Batch)
		// Steps i = 0..3 attend over prompt+1+i positions: 6, 7, 8, 9 → mean 7.5.
		require.Equal(t, int64(b.Batch)*bpt*(6+7+8+9)/4, b.CacheBytesPerStep, "batch %d", b.Batch)
		require.Greater(t, b.TokensPerSecond, 0.0)
	}
	require.Equal(t, 1.0, got.Batches[0].SpeedupOverBatch1)
	require.Greater(t, got.MB.FromFormula, 1)
	require.Equal(t, got.MB.FromFormula, got.MB.ObservedRunning, "the scheduler admits what the formula says fits")
	require.Equal(t, got.MB.CacheBlocks/got.MB.BlocksPerSeq, got.MB.FromFormula)
}

// TestBenchBatchRounds: --rounds 3 measures each batch size three times, interleaved (the
// progress lines say so in order), and prints the median ratio with its range.
func TestBenchBatchRounds(t *testing.T) {
	out, stderr, code := kvref(t, "bench", "--shape", "tiny", "--batches", "1,2", "--steps", "2", "--prompt", "3", "--cache-mem", "256KiB", "--ctx", "40", "--rounds", "3")
	require.Equal(t, 0, code, stderr)
	var progress []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "kvref bench: round") {
			progress = append(progress, l)
		}
	}
	require.Equal(t, []string{
		"kvref bench: round 1 of 3, batch 1...", "kvref bench: round 1 of 3, batch 2...",
		"kvref bench: round 2 of 3, batch 1...", "kvref bench: round 2 of 3, batch 2...",
		"kvref bench: round 3 of 3, batch 1...", "kvref bench: round 3 of 3, batch 2...",
	}, progress)
	require.Contains(t, out, "3 interleaved rounds")
	require.Regexp(t, `\n +2 .* \d+\.\d\d \[\d+\.\d\d–\d+\.\d\d\]\n`, out, "batch 2's ratio with the range of the rounds")
}

// TestBenchRoofline runs --roofline on the tiny shape with a small bandwidth buffer: every
// figure is measured and positive, the fractions are the ratios of the figures printed
// beside them, and the portable kernels were measured in the same run.
func TestBenchRoofline(t *testing.T) {
	out, stderr, code := kvref(t, "bench", "--shape", "tiny", "--roofline", "--bandwidth-buffer", "32MiB", "--steps", "8", "--prefill", "40", "--json")
	require.Equal(t, 0, code, stderr)
	var got struct {
		R                 benchmark.Roofline `json:"roofline"`
		BandwidthFraction float64            `json:"bandwidth_fraction"`
		FMAFraction       float64            `json:"fma_fraction"`
		PortableBandwidth *float64           `json:"portable_bandwidth_fraction"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	r := got.R
	require.Greater(t, r.BandwidthGBs, 0.0)
	require.Greater(t, r.BandwidthGBs1, 0.0)
	require.Greater(t, r.DecodeTokensPerSecond, 0.0)
	require.InDelta(t, r.DecodeGBs/r.BandwidthGBs, got.BandwidthFraction, 1e-9)
	require.Equal(t, r.BandwidthFraction, got.BandwidthFraction)
	require.Len(t, r.PairedFractions, benchmark.PairedWindows, "windows timed between bandwidth probes")
	for _, f := range r.PairedFractions {
		require.Greater(t, f, 0.0)
	}
	require.Equal(t, benchmark.Median(r.PairedFractions), r.PairedBandwidthFraction)
	require.Greater(t, r.PrefillGFLOPs, 0.0)
	require.Equal(t, 40, r.PrefillTokens)
	if r.FMAPeakGFLOPs > 0 {
		require.InDelta(t, r.PrefillGFLOPs/r.FMAPeakGFLOPs, got.FMAFraction, 1e-9)
	} else {
		require.Zero(t, got.FMAFraction, "no peak measured, no fraction")
	}
	require.NotNil(t, r.Portable, "the portable kernels are measured by default")
	require.NotNil(t, got.PortableBandwidth)
	require.Greater(t, r.Portable.DecodeTokensPerSecond, 0.0)
	require.Equal(t, r.DecodeBytesPerToken, r.Portable.DecodeBytesPerToken, "both paths read the same bytes per token")
	require.Empty(t, r.Portable.PairedFractions, "only the fast run is timed between probes")
	if r.MulAddPeakGFLOPs > 0 {
		require.Greater(t, r.BatchCeiling, 0.0)
		require.LessOrEqual(t, r.BatchCeiling, float64(benchmark.CeilingBatch))
		require.Contains(t, out, `"batch16_ceiling"`)
		require.InDelta(t, r.BatchSpeedup/r.BatchCeiling, r.BatchCeilingFraction, 1e-9, "the fraction of the ceiling batch-16 decode reaches")
	}
	require.Greater(t, r.BatchTokensPerSecond, 0.0, "batch-16 decode is measured")
	require.InDelta(t, r.BatchTokensPerSecond/r.DecodeTokensPerSecond, r.BatchSpeedup, 1e-9)
}

func TestBenchRooflineRejectsTinyBuffer(t *testing.T) {
	_, stderr, code := kvref(t, "bench", "--shape", "tiny", "--roofline", "--bandwidth-buffer", "4KiB")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "--bandwidth-buffer 4KiB")
}

// TestBenchHuggingFaceDirectory: bench -m takes every model format loader.Open reads, here
// a Hugging Face directory, and measures the same model as its GGUF (the same bytes read
// per decode step).
func TestBenchHuggingFaceDirectory(t *testing.T) {
	dir, ggufPath := tinyHFAndGGUF(t)
	var weights []int64
	for _, ref := range []string{dir, ggufPath} {
		out, stderr, code := kvref(t, "bench", "-m", ref, "--batches", "1", "--steps", "2", "--prompt", "3", "--cache-mem", "256KiB", "--ctx", "40", "--json")
		require.Equal(t, 0, code, stderr)
		var got struct {
			Batches []benchmark.BatchResult `json:"batches"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		require.Len(t, got.Batches, 1)
		weights = append(weights, got.Batches[0].WeightBytesPerStep)
	}
	require.Equal(t, weights[0], weights[1])
}

// fakeLlamaBenchScript writes a stand-in for llama-bench that reports tg at 50 and pp at
// 500 tokens/s in llama-bench's JSON.
func fakeLlamaBenchScript(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "llama-bench")
	script := `#!/bin/sh
p=0; n=0
while [ $# -gt 0 ]; do case "$1" in -p) p=$2;; -n) n=$2;; esac; shift; done
ts=50; [ "$p" -gt 0 ] && ts=500
echo "[{\"build_commit\": \"fake\", \"cpu_info\": \"Fake CPU\", \"model_type\": \"llama fake\", \"n_prompt\": $p, \"n_gen\": $n, \"avg_ts\": $ts}]"
`
	require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
	return p
}

// TestBenchVsLlamaBench: --vs-llama-bench prints a table with both engines' medians and
// the ratio, and --json the per-round figures, against a stand-in llama-bench.
func TestBenchVsLlamaBench(t *testing.T) {
	ggufPath := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, synth.Tiny.WriteFile(ggufPath))
	fake := fakeLlamaBenchScript(t)
	args := []string{"bench", "-m", ggufPath, "--vs-llama-bench", fake, "--tg", "8", "--prefill", "16", "--rounds", "2", "--reps", "1", "-t", "1"}
	out, stderr, code := kvref(t, args...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "llama.cpp tok/s")
	require.Contains(t, out, "tg8")
	require.Contains(t, out, "pp16")
	require.Contains(t, out, "CPU ")

	out, stderr, code = kvref(t, append(args, "--json")...)
	require.Equal(t, 0, code, stderr)
	var got struct {
		C benchmark.Comparison `json:"comparison"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got.C.Tests, 2)
	require.Equal(t, []float64{50, 50}, got.C.Tests[0].Llama)
	require.Equal(t, []float64{500, 500}, got.C.Tests[1].Llama)
	for _, tr := range got.C.Tests {
		for r, k := range tr.Kvref {
			require.InDelta(t, k/tr.Llama[r], tr.Ratios[r], 1e-12)
		}
	}
	require.Equal(t, "f16", got.C.CacheType, "llama-bench's default cache")
}

// TestBenchVsLlamaBenchRefuses: llama-bench reads only GGUF files and has no int8 cache.
func TestBenchVsLlamaBenchRefuses(t *testing.T) {
	fake := fakeLlamaBenchScript(t)
	_, stderr, code := kvref(t, "bench", "--shape", "tiny", "--vs-llama-bench", fake)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "-m must name a GGUF file")
	notGGUF := filepath.Join(t.TempDir(), "model.bin")
	require.NoError(t, os.WriteFile(notGGUF, []byte("not a model"), 0o644))
	_, stderr, code = kvref(t, "bench", "-m", notGGUF, "--vs-llama-bench", fake)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "is not a GGUF file")
	ggufPath := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, synth.Tiny.WriteFile(ggufPath))
	_, stderr, code = kvref(t, "bench", "-m", ggufPath, "--vs-llama-bench", fake, "--cache-dtype", "int8")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "no llama.cpp equivalent")
	_, stderr, code = kvref(t, "bench", "--shape", "tiny", "--kernels", "sse9")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, `unknown kernel level "sse9"`)
}

// TestBenchVsRealLlamaBench runs the comparison against llama.cpp's own llama-bench
// (../shared/bin) on the project's tiny model: both engines report a positive rate for
// each test, llama-bench on the threads and cache type asked for.
func TestBenchVsRealLlamaBench(t *testing.T) {
	lb := testutil.Shared(t, "bin/llama-bench")
	model := filepath.Join(testutil.ModuleRoot(t), "testdata", "tiny.gguf")
	out, stderr, code := kvref(t, "bench", "-m", model, "--vs-llama-bench", lb, "--tg", "4", "--prefill", "16", "--rounds", "1", "--reps", "1", "-t", "1", "--json")
	require.Equal(t, 0, code, stderr)
	var got struct {
		C benchmark.Comparison `json:"comparison"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got.C.Tests, 2)
	for _, tr := range got.C.Tests {
		require.Greater(t, tr.Llama[0], 0.0, tr.Name)
		require.Greater(t, tr.Kvref[0], 0.0, tr.Name)
	}
	require.NotEmpty(t, got.C.LlamaCPU)
}
