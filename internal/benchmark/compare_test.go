package benchmark

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

func TestMedian(t *testing.T) {
	t.Parallel()

	require.Equal(t, 0.0, Median(nil))
	require.Equal(t, 3.0, Median([]float64{3}))
	require.Equal(t, 2.0, Median([]float64{3, 1, 2}))
	require.Equal(t, 2.5, Median([]float64{4, 1, 3, 2}))
	v := []float64{3, 1, 2}
	Median(v)
	require.Equal(t, []float64{3, 1, 2}, v, "the input is not reordered")
}

// tinySetup runs on one thread with an f32 cache.
func tinySetup(t *testing.T) Setup {
	t.Helper()
	return Setup{Threads: 1, KType: quant.F32, VType: quant.F32}
}

// TestCompare runs kvref on the tiny shape against a stand-in llama-bench that reports
// tg 100 and pp 1000 tokens/s: every round has both engines' figures, each ratio is
// kvref's figure over llama-bench's, the medians are the rounds' medians, and llama-bench
// ran each test once per round with the same threads and cache type.
func TestCompare(t *testing.T) {
	t.Parallel()

	shape, err := synth.ShapeByName("tiny")
	require.NoError(t, err)
	m, err := shape.Model()
	require.NoError(t, err)
	script, argsFile := fakeLlamaBench(t, false)
	c, err := Compare(context.Background(), m, CompareConfig{
		Setup: tinySetup(t), Model: "tiny.gguf", LlamaBench: LlamaBench{Path: script, CacheType: "f32"},
		Rounds: 3, Reps: 2, Gen: 8, Prompt: 16,
	})
	require.NoError(t, err)
	require.Len(t, c.Tests, 2)
	require.Equal(t, "tg8", c.Tests[0].Name)
	require.Equal(t, "pp16", c.Tests[1].Name)
	for i, want := range []float64{100, 1000} {
		tr := c.Tests[i]
		require.Len(t, tr.Llama, 3)
		require.Len(t, tr.Kvref, 3)
		require.Len(t, tr.Ratios, 3)
		for r := range 3 {
			require.Equal(t, want, tr.Llama[r])
			require.Greater(t, tr.Kvref[r], 0.0)
			require.InDelta(t, tr.Kvref[r]/want, tr.Ratios[r], 1e-12)
		}
		require.Equal(t, Median(tr.Kvref), tr.KvrefMedian)
		require.Equal(t, Median(tr.Ratios), tr.RatioMedian)
	}
	require.Equal(t, "Fake CPU", c.LlamaCPU)
	require.Equal(t, "llama fake", c.ModelType)
	require.Equal(t, 1, c.Threads)
	require.NotEmpty(t, c.CPU)
	args, err := os.ReadFile(argsFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(args)), "\n")
	require.Len(t, lines, 6, "2 tests × 3 rounds")
	for _, l := range lines {
		require.Contains(t, l, "-t 1 -o json -r 2 -ctk f32 -ctv f32")
	}

	_, err = Compare(context.Background(), m, CompareConfig{Setup: tinySetup(t), LlamaBench: LlamaBench{Path: script}, Rounds: 1, Reps: 1})
	require.ErrorContains(t, err, "nothing to compare")
	// A path that is missing or not executable is refused before anything runs.
	notExec := filepath.Join(t.TempDir(), "llama-bench")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	for _, path := range []string{filepath.Join(t.TempDir(), "missing"), notExec, ""} {
		_, err = Compare(context.Background(), m, CompareConfig{Setup: tinySetup(t), LlamaBench: LlamaBench{Path: path}, Rounds: 1, Reps: 1, Gen: 8})
		require.ErrorContains(t, err, "cannot be run", path)
		require.ErrorContains(t, err, "path of llama.cpp's llama-bench", path)
	}
	_, err = Compare(context.Background(), m, CompareConfig{Setup: tinySetup(t), LlamaBench: LlamaBench{Path: script}, Rounds: 1, Reps: 1, Prompt: m.Config.Context})
	require.ErrorContains(t, err, "do not fit in the model's context")
}

// TestMeter: a generation test produces exactly n tokens from a one-token prompt, a
// prompt test reuses nothing from the previous one, and both report a rate.
func TestMeter(t *testing.T) {
	t.Parallel()

	shape, err := synth.ShapeByName("tiny")
	require.NoError(t, err)
	m, err := shape.Model()
	require.NoError(t, err)
	mt, err := NewMeter(m, tinySetup(t), 33)
	require.NoError(t, err)
	defer mt.Close()
	for range 2 {
		g, err := mt.Generation(32)
		require.NoError(t, err)
		require.Greater(t, g, 0.0)
		p, err := mt.Prompt(32)
		require.NoError(t, err)
		require.Greater(t, p, 0.0)
	}
	_, err = mt.Generation(0)
	require.Error(t, err)
	_, err = mt.Prompt(40)
	require.Error(t, err, "beyond the meter's context")
}
