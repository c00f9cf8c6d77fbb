package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

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
		Batches []batchResult    `json:"batches"`
		MB      memoryBoundBatch `json:"memory_bound_batch"`
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
		require.Equal(t, m.Weights.Bytes(), b.WeightBytesPerStep)
		// Steps i = 0..3 attend over prompt+1+i positions: 6, 7, 8, 9 → mean 7.5.
		require.Equal(t, int64(b.Batch)*bpt*(6+7+8+9)/4, b.CacheBytesPerStep, "batch %d", b.Batch)
		require.Greater(t, b.TokensPerSecond, 0.0)
	}
	require.Equal(t, 1.0, got.Batches[0].SpeedupOverBatch1)
	require.Greater(t, got.MB.FromFormula, 1)
	require.Equal(t, got.MB.FromFormula, got.MB.ObservedRunning, "the scheduler admits what the formula says fits")
	require.Equal(t, got.MB.CacheBlocks/got.MB.BlocksPerSeq, got.MB.FromFormula)
}

// TestBenchRoofline runs --roofline on the tiny shape with a small bandwidth buffer: every
// figure is measured and positive, the fractions are the ratios of the figures printed
// beside them, and the portable kernels were measured in the same run.
func TestBenchRoofline(t *testing.T) {
	out, stderr, code := kvref(t, "bench", "--shape", "tiny", "--roofline", "--bandwidth-buffer", "32MiB", "--steps", "8", "--prefill", "40", "--json")
	require.Equal(t, 0, code, stderr)
	var got struct {
		R                 roofline `json:"roofline"`
		BandwidthFraction float64  `json:"bandwidth_fraction"`
		FMAFraction       float64  `json:"fma_fraction"`
		PortableBandwidth *float64 `json:"portable_bandwidth_fraction"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	r := got.R
	require.Greater(t, r.BandwidthGBs, 0.0)
	require.Greater(t, r.BandwidthGBs1, 0.0)
	require.Greater(t, r.DecodeTokensPerSecond, 0.0)
	require.InDelta(t, r.DecodeGBs/r.BandwidthGBs, got.BandwidthFraction, 1e-9)
	require.Equal(t, r.BandwidthFraction, got.BandwidthFraction)
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
}

func TestBenchRooflineRejectsTinyBuffer(t *testing.T) {
	_, stderr, code := kvref(t, "bench", "--shape", "tiny", "--roofline", "--bandwidth-buffer", "4KiB")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "--bandwidth-buffer 4KiB")
}
