package benchmark

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
)

// TestQuantizedWeightsDecidesThePeak: a model whose matrices are in a block format is
// measured against the int8 peak, a float one against the FMA peak.
func TestQuantizedWeightsDecidesThePeak(t *testing.T) {
	shape, err := synth.ShapeByName("tiny")
	require.NoError(t, err)
	f32, err := shape.Model()
	require.NoError(t, err)
	defer f32.Close()
	require.False(t, quantizedWeights(f32), "f32 weights")

	path := filepath.Join(t.TempDir(), "q8_0.gguf")
	_, err = shape.WriteQuantizedFile(path, gguf.Q8_0)
	require.NoError(t, err)
	q, err := model.LoadGGUF(path)
	require.NoError(t, err)
	defer q.Close()
	require.True(t, quantizedWeights(q), "q8_0 weights")
}

// TestWriteRooflineNamesThePeakOfTheWeights: the prefill line of a quantized model gives its
// fraction of the int8 peak, a float model's its fraction of the FMA peak.
func TestWriteRooflineNamesThePeakOfTheWeights(t *testing.T) {
	r := Roofline{Kernels: "avx512", Threads: 2, BandwidthGBs: 30, FMAPeakGFLOPs: 200, MulAddPeakGFLOPs: 190,
		Int8PeakGops: 800, Int8PeakWhat: "512-bit VPDPBUSD"}
	r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds = 512, 400, 1
	r.FMAFraction, r.MulAddFraction, r.Int8Fraction = 2, 400.0/190, 0.5
	var float strings.Builder
	WriteRoofline(&float, r)
	require.Contains(t, float.String(), "= 200.0% of the FMA peak")
	require.Contains(t, float.String(), "int8 peak              800.00 Gop/s with 512-bit VPDPBUSD")

	r.QuantizedWeights = true
	var quantized strings.Builder
	WriteRoofline(&quantized, r)
	require.Contains(t, quantized.String(), "= 50.0% of the int8 peak")
	require.NotContains(t, quantized.String(), "of the FMA peak")
}

// TestWindowFractionsUseTheBetterNeighbour: each decode window is set against the better of
// the probes just before and just after it, not against the run's best probe, and the text
// gives their median and range.
func TestWindowFractionsUseTheBetterNeighbour(t *testing.T) {
	got := windowFractions([]float64{30, 20, 40}, []float64{40, 50, 25, 20})
	require.Equal(t, []float64{30.0 / 50, 20.0 / 50, 40.0 / 25}, got)

	r := Roofline{Kernels: "avx2", Threads: 2, BandwidthGBs: 50}
	r.PairedFractions = []float64{0.6, 0.4, 0.9}
	var b strings.Builder
	WriteRoofline(&b, r)
	require.Contains(t, b.String(), "decode beside probes 60.0 [40.0–90.0]% of the bandwidth probed just before or after it (median of 3 windows of 8 steps")
}

// TestBatchCeilingIsTheArithmeticOverTheStep: a model of P weights in its layers and
// classifier decodes 16 sequences in no less than 2·16·P operations at the peak; the
// ceiling over batch 1 is 16 times batch 1's step over that, capped at 16.
func TestBatchCeilingIsTheArithmeticOverTheStep(t *testing.T) {
	shape, err := synth.ShapeByName("tiny")
	require.NoError(t, err)
	m, err := shape.Model()
	require.NoError(t, err)
	defer m.Close()
	c := m.Config
	q, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim // Wq and Wo, Wk and Wv
	p := float64(c.Layers*(2*c.Dim*q+2*c.Dim*kv+3*c.Dim*c.Hidden) + c.Vocab*c.Dim)
	arith := 2 * 16 * p / 100e9 // seconds at 100 G/s
	require.InDelta(t, arith, BatchArithmetic(m, 16, 100), arith*1e-12)
	require.Zero(t, BatchArithmetic(m, 16, 0), "no peak, no time")
	require.InDelta(t, 4, BatchCeiling(16, arith/4, arith), 1e-9, "a batch-1 step a quarter of the arithmetic: ×4")
	require.Equal(t, 16.0, BatchCeiling(16, 2*arith, arith), "memory-bound: the batch's arithmetic fits in batch 1's step")
	require.Zero(t, BatchCeiling(16, arith, 0), "no arithmetic time, no ceiling")

	r := Roofline{Kernels: "avx2", Threads: 2, BandwidthGBs: 50, MulAddPeakGFLOPs: 100}
	r.DecodeTokensPerSecond, r.BatchArithmeticSeconds, r.BatchCeiling = 50, 0.1, 3.2
	var b strings.Builder
	WriteRoofline(&b, r)
	require.Contains(t, b.String(), "batch 16 ceiling     ×3.2 batch 1 at most: 16 sequences' products take 100.0 ms at the multiply+add peak, against 320.0 ms for 16 batch-1 steps")
}

// TestBatchCeilingFractionLine: the roofline says how fast batch-16 decode ran and what
// fraction of its ceiling that speedup is.
func TestBatchCeilingFractionLine(t *testing.T) {
	r := Roofline{Kernels: "avx2", Threads: 2, BandwidthGBs: 50, MulAddPeakGFLOPs: 100}
	r.DecodeTokensPerSecond, r.BatchArithmeticSeconds, r.BatchCeiling = 50, 0.1, 8
	r.BatchTokensPerSecond, r.BatchSpeedup, r.BatchCeilingFraction = 300, 6, 0.75
	var b strings.Builder
	WriteRoofline(&b, r)
	require.Contains(t, b.String(), "decode, batch 16        300.0 tokens/s = ×6.00 batch 1 (best 8-step windows of each) = 75.0% of the batch 16 ceiling\n")
}

// TestBestWindowIsTheFastestRun: the best window is the fastest DecodeWindow consecutive
// steps, with the bytes those steps read.
func TestBestWindowIsTheFastestRun(t *testing.T) {
	var dec BatchResult
	for i := range DecodeWindow + 2 {
		secs := 1.0
		if i >= 2 {
			secs = 0.5 // steps 2..DecodeWindow+1 are the fast ones
		}
		dec.stepSeconds = append(dec.stepSeconds, secs)
		dec.stepBytes = append(dec.stepBytes, int64(i))
	}
	secs, bytes := bestWindow(dec)
	require.Equal(t, 0.5*DecodeWindow, secs)
	want := int64(0)
	for i := 2; i < DecodeWindow+2; i++ {
		want += int64(i)
	}
	require.Equal(t, want, bytes)
}

// TestRooflineJSON lifts the fractions to the top level, the portable ones only when the
// portable kernels were measured.
func TestRooflineJSON(t *testing.T) {
	r := Roofline{}
	r.BandwidthFraction, r.FMAFraction = 0.8, 0.3
	steal := startSteal(filepath.Join(t.TempDir(), "missing"))
	out := r.JSON("m.gguf", steal)
	require.Equal(t, "m.gguf", out["model"])
	require.Equal(t, 0.8, out["bandwidth_fraction"])
	require.Equal(t, 0.3, out["fma_fraction"])
	require.Nil(t, out["host_steal_fraction"].(*float64))
	require.NotContains(t, out, "portable_bandwidth_fraction")
	r.Portable = &RooflineRun{BandwidthFraction: 0.5, FMAFraction: 0.1}
	out = r.JSON("m.gguf", steal)
	require.Equal(t, 0.5, out["portable_bandwidth_fraction"])
	require.Equal(t, 0.1, out["portable_fma_fraction"])
}
