package benchmark

import (
	"fmt"
	"io"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/plan"
)

// The text forms of the measurements, as kvref bench prints them.

// WriteBatches writes the decode throughput table, one row per batch size, and the
// memory-bound batch line.
func WriteBatches(w io.Writer, results []BatchResult, mb MemoryBoundBatch) {
	fmt.Fprintf(w, "%6s %12s %12s %10s %14s %14s %9s  %s\n", "batch", "tok/s", "tok/s/seq", "ms/step", "weights B/step", "cache B/step", "GB/s", "×batch1")
	rounds := 1
	for _, r := range results {
		speedup := fmt.Sprintf("%.2f", r.SpeedupOverBatch1)
		if len(r.SpeedupsOverBatch1) > 1 {
			speedup = medianRange(r.SpeedupsOverBatch1, "%.2f")
		}
		rounds = max(rounds, r.Rounds)
		fmt.Fprintf(w, "%6d %12.1f %12.1f %10.2f %14d %14d %9.2f  %7s\n", r.Batch, r.TokensPerSecond, r.TokensPerSecondPerSeq,
			r.MillisecondsPerStep, r.WeightBytesPerStep, r.CacheBytesPerStep, r.GBPerSecond, speedup)
	}
	if rounds > 1 {
		fmt.Fprintf(w, "(%d interleaved rounds: each row is its median round; ×batch1 is the median of the rounds' ratios, their range in brackets)\n", rounds)
	}
	fmt.Fprintf(w, "\nmemory-bound batch: a %s cache (%d blocks of %d tokens, %d B/token) holds %d sequences of %d tokens (%d blocks each) by the formula; the scheduler admitted %d\n",
		plan.FormatSize(mb.CacheBytes), mb.CacheBlocks, mb.BlockSize, mb.BytesPerToken, mb.FromFormula, mb.Context, mb.BlocksPerSeq, mb.ObservedRunning)
	if len(mb.GroupBlocksPerSeq) > 0 {
		fmt.Fprintf(w, "cache groups: a sequence's blocks group by group %v (sliding groups hold their window's)\n", mb.GroupBlocksPerSeq)
	}
	if n := len(results); n > 0 && len(results[n-1].Groups) > 0 {
		fmt.Fprintf(w, "batch %d after its steps, blocks per cache group (window: used/reclaimed):", results[n-1].Batch)
		for _, g := range results[n-1].Groups {
			fmt.Fprintf(w, " %d:%d/%d", g.Window, g.BlocksUsed, g.BlocksReclaimed)
		}
		fmt.Fprintln(w)
	}
}

// WriteRoofline writes the measured limits (bandwidth, arithmetic peak), the fast run
// against them with the kernels it used, and the portable run when there is one.
func WriteRoofline(w io.Writer, r Roofline) {
	fmt.Fprintf(w, "roofline (%s kernels, %d threads) on %s\n", r.Kernels, r.Threads, CPUName())
	fmt.Fprintf(w, "  memory bandwidth     %8.2f GB/s (1 thread %.2f GB/s), best of 10 passes (before and after decode) streaming the buffer through probe.StreamRead\n", r.BandwidthGBs, r.BandwidthGBs1)
	if r.FMAPeakGFLOPs > 0 {
		fmt.Fprintf(w, "  arithmetic peak      %8.2f GFLOP/s with %d-bit FMA, %.2f with multiply+add (the kernels' unfused arithmetic)\n", r.FMAPeakGFLOPs, r.PeakVectorBits, r.MulAddPeakGFLOPs)
		if r.Int8PeakGops > 0 {
			fmt.Fprintf(w, "  int8 peak            %8.2f Gop/s with %s (the quantized weights' integer products; a multiply-add is 2 operations)\n", r.Int8PeakGops, r.Int8PeakWhat)
		}
	} else {
		fmt.Fprintln(w, "  arithmetic peak      not measured (no vector peak loop in this build: -tags purego or no AVX)")
	}
	writeRooflineRun(w, r, r.RooflineRun)
	fmt.Fprintln(w, "  kernels (the fast run; the portable run uses every twin):")
	for _, c := range kernels.ReportLines(r.Implementations) {
		fmt.Fprintln(w, "    "+c)
	}
	if p := r.Portable; p != nil {
		fmt.Fprintln(w, "portable Go kernels (the -tags purego code), same run")
		writeRooflineRun(w, r, *p)
		fmt.Fprintf(w, "  fast / portable      decode ×%.2f, prefill ×%.2f\n", r.DecodeTokensPerSecond/p.DecodeTokensPerSecond, p.PrefillSeconds/r.PrefillSeconds)
	}
}

// writeRooflineRun writes one run's decode and prefill against the limits.
func writeRooflineRun(w io.Writer, limits Roofline, r RooflineRun) {
	fmt.Fprintf(w, "  decode, batch 1      %8.1f tokens/s, %d B read per token, %.2f GB/s = %.1f%% of the measured bandwidth (best %d-step window; mean of %d steps %.1f%%)\n",
		r.DecodeTokensPerSecond, r.DecodeBytesPerToken, r.DecodeGBs, 100*r.BandwidthFraction, DecodeWindow, r.DecodeSteps, 100*r.MeanBandwidthFraction)
	if len(r.PairedFractions) > 0 {
		pct := make([]float64, len(r.PairedFractions))
		for i, f := range r.PairedFractions {
			pct[i] = 100 * f
		}
		fmt.Fprintf(w, "  decode beside probes %s%% of the bandwidth probed just before or after it (median of %d windows of %d steps, each against the better of the probes on either side; range in brackets)\n",
			medianRange(pct, "%.1f"), len(pct), DecodeWindow)
	}
	if r.BatchCeiling > 0 {
		_, what := limits.weightsPeak()
		fmt.Fprintf(w, "  batch %d ceiling     ×%.1f batch 1 at most: %d sequences' products take %.1f ms at the %s peak, against %.1f ms for %d batch-1 steps\n",
			CeilingBatch, r.BatchCeiling, CeilingBatch, 1000*r.BatchArithmeticSeconds, what, 1000*CeilingBatch/r.DecodeTokensPerSecond, CeilingBatch)
	}
	if r.BatchTokensPerSecond > 0 {
		fmt.Fprintf(w, "  decode, batch %d     %8.1f tokens/s = ×%.2f batch 1 (best %d-step windows of each)", CeilingBatch, r.BatchTokensPerSecond, r.BatchSpeedup, DecodeWindow)
		if r.BatchCeilingFraction > 0 {
			fmt.Fprintf(w, " = %.1f%% of the batch %d ceiling", 100*r.BatchCeilingFraction, CeilingBatch)
		}
		fmt.Fprintln(w)
	}
	switch {
	case limits.QuantizedWeights && limits.Int8PeakGops > 0:
		fmt.Fprintf(w, "  prefill, %d tokens  %8.2f GFLOP/s in %.3f s = %.1f%% of the int8 peak (quantized weights: integer products)\n",
			r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds, 100*r.Int8Fraction)
	case limits.FMAPeakGFLOPs > 0:
		fmt.Fprintf(w, "  prefill, %d tokens  %8.2f GFLOP/s in %.3f s = %.1f%% of the FMA peak (%.1f%% of the multiply+add peak)\n",
			r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds, 100*r.FMAFraction, 100*r.MulAddFraction)
	default:
		fmt.Fprintf(w, "  prefill, %d tokens  %8.2f GFLOP/s in %.3f s\n", r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds)
	}
}

// WriteComparison writes a comparison with llama-bench: the machine and builds, then one
// row per test with both engines' medians and ranges and the ratio.
func WriteComparison(w io.Writer, c Comparison) {
	fmt.Fprintf(w, "CPU %s; kvref %s kernels; llama.cpp %s (%s)\n\n", c.CPU, c.Kernels, c.LlamaBuild, c.LlamaPath)
	fmt.Fprintf(w, "%-7s %22s %22s %26s\n", "test", "llama.cpp tok/s", "kvref tok/s", "kvref / llama.cpp")
	for _, t := range c.Tests {
		fmt.Fprintf(w, "%-7s %22s %22s %26s\n", t.Name, medianRange(t.Llama, "%.2f"), medianRange(t.Kvref, "%.2f"), medianRange(t.Ratios, "%.3f"))
	}
	fmt.Fprintln(w, "\n(medians of the rounds, the range of the rounds in brackets; the ratio column is the median of each round's ratio)")
}

// medianRange formats the median of v and, for several values, their range.
func medianRange(v []float64, format string) string {
	s := fmt.Sprintf(format, Median(v))
	if len(v) > 1 {
		lo, hi := v[0], v[0]
		for _, x := range v {
			lo, hi = min(lo, x), max(hi, x)
		}
		s += fmt.Sprintf(" ["+format+"–"+format+"]", lo, hi)
	}
	return s
}
