package main

import (
	"fmt"
	"github.com/kvref/kvref/internal/plan"
	"io"
	"sync"
	"time"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// roofline is the --roofline report: the machine's measured limits and how close decode and
// prefill come to them.
type roofline struct {
	Kernels          string  `json:"kernels"` // the kernel implementation in use
	Threads          int     `json:"threads"`
	BandwidthGBs1    float64 `json:"bandwidth_gb_s_1_thread"`
	BandwidthGBs     float64 `json:"bandwidth_gb_s"` // with Threads threads
	PeakVectorBits   int     `json:"peak_vector_bits"`
	FMAPeakGFLOPs    float64 `json:"fma_peak_gflop_s"`
	MulAddPeakGFLOPs float64 `json:"mul_add_peak_gflop_s"`
	rooflineRun
	// The same decode and prefill with the portable Go kernels (kernels.SetPortable), the
	// code a -tags purego build runs; absent with --portable=false.
	Portable *rooflineRun `json:"portable,omitempty"`
}

// rooflineRun is one kernel path's decode and prefill figures against the machine's limits.
type rooflineRun struct {
	DecodeBytesPerToken   int64   `json:"decode_bytes_per_token"` // weights + cache read per token
	DecodeSteps           int     `json:"decode_steps"`
	DecodeTokensPerSecond float64 `json:"decode_tokens_per_second"` // best window of decodeWindow steps
	DecodeGBs             float64 `json:"decode_gb_s"`
	BandwidthFraction     float64 `json:"bandwidth_fraction"`
	MeanBandwidthFraction float64 `json:"mean_bandwidth_fraction"` // over all the timed steps
	PrefillTokens         int     `json:"prefill_tokens"`
	PrefillSeconds        float64 `json:"prefill_seconds"`
	PrefillGFLOPs         float64 `json:"prefill_gflop_s"`
	FMAFraction           float64 `json:"fma_fraction"`
	MulAddFraction        float64 `json:"mul_add_fraction"`
}

// decodeWindow is how many consecutive decode steps make one timing window; the report
// takes the best window, as the bandwidth figure is the best of its passes, so that both
// sides of the ratio are measured the same way on a machine shared with other work.
const decodeWindow = 8

// measureBandwidth streams a buffer much larger than the last-level cache through
// kernels.StreamRead (eight independent vector additions from memory, so that no chain of
// additions limits it) on each of threads goroutines and returns the best of five passes
// in GB/s.
func measureBandwidth(buf []float32, threads int) float64 {
	best := 0.0
	var sink float32
	var mu sync.Mutex
	for pass := 0; pass < 5; pass++ {
		chunk := len(buf) / threads
		start := time.Now()
		var wg sync.WaitGroup
		for t := 0; t < threads; t++ {
			part := buf[t*chunk : (t+1)*chunk]
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := kernels.StreamRead(part)
				mu.Lock()
				sink += v
				mu.Unlock()
			}()
		}
		wg.Wait()
		gbs := float64(threads*chunk*4) / time.Since(start).Seconds() / 1e9
		best = max(best, gbs)
	}
	_ = sink
	return best
}

// measurePeak runs a register-only loop of flopsPerIter flops on each of threads
// goroutines and returns GFLOP/s (best of three).
func measurePeak(loop func(int), flopsPerIter, threads int) float64 {
	if loop == nil {
		return 0
	}
	const iters = 20_000_000
	best := 0.0
	for pass := 0; pass < 3; pass++ {
		start := time.Now()
		var wg sync.WaitGroup
		for t := 0; t < threads; t++ {
			wg.Add(1)
			go func() { defer wg.Done(); loop(iters) }()
		}
		wg.Wait()
		best = max(best, float64(threads)*float64(iters)*float64(flopsPerIter)/time.Since(start).Seconds()/1e9)
	}
	return best
}

// prefillFlops counts the multiply-adds (×2) of a forward pass over n tokens: every weight
// matrix once per token, the classifier for the last token only, attention over the causal
// triangle.
func prefillFlops(m *model.Model, n int) float64 {
	c := m.Config
	perToken := 0.0
	for _, l := range m.Weights.Layers {
		for _, w := range []*model.Matrix{l.Wq, l.Wk, l.Wv, l.Wo, l.Gate, l.Up, l.Down} {
			perToken += float64(w.Rows) * float64(w.Cols)
		}
	}
	attn := float64(c.Layers) * float64(c.Heads) * float64(c.HeadDim) * float64(n) * float64(n+1) / 2 * 2 // q·k and p·v
	return 2 * (perToken*float64(n) + attn + float64(c.Vocab)*float64(c.Dim))
}

// runRoofline measures the machine and the model's decode and prefill against it, with
// the fast kernels and then (unless --portable=false) with the portable ones.
func runRoofline(m *model.Model, f benchFlags, kType, vType quant.CacheType, stderr io.Writer) (roofline, error) {
	threads := threadsOr(f.threads)
	r := roofline{Kernels: kernels.Implementation(), Threads: threads}
	bufBytes := int64(1 << 30)
	if f.bandwidthBuffer.set() {
		bufBytes = f.bandwidthBuffer.bytes
	}
	if f.prefill < 1 {
		return r, fmt.Errorf("--prefill %d: the timed prefill needs at least one token", f.prefill)
	}
	if bufBytes < 1<<20 {
		return r, fmt.Errorf("--bandwidth-buffer %s: the bandwidth probe needs at least 1MiB, and should be much larger than the last-level cache", f.bandwidthBuffer.text)
	}
	fmt.Fprintf(stderr, "kvref bench: measuring memory bandwidth (%s stream)...\n", plan.FormatSize(bufBytes))
	buf := make([]float32, bufBytes/4)
	for i := range buf {
		buf[i] = 1
	}
	r.BandwidthGBs1 = measureBandwidth(buf, 1)
	r.BandwidthGBs = measureBandwidth(buf, threads)
	fmt.Fprintln(stderr, "kvref bench: measuring arithmetic peak...")
	fma, mulAdd, fmaFlops, mulAddFlops, bits := kernels.PeakLoops()
	r.PeakVectorBits = bits
	r.FMAPeakGFLOPs = measurePeak(fma, fmaFlops, threads)
	r.MulAddPeakGFLOPs = measurePeak(mulAdd, mulAddFlops, threads)

	run, err := rooflineDecodePrefill(m, f, kType, vType, r, f.steps, 2, stderr)
	if err != nil {
		return r, err
	}
	// Other work on a shared machine can hold the bandwidth down for seconds: measure it
	// again after the decode and keep the best of both, so that a slow moment during the
	// probe does not flatter the decode figure.
	fmt.Fprintln(stderr, "kvref bench: measuring memory bandwidth again...")
	if again := measureBandwidth(buf, threads); again > r.BandwidthGBs {
		run.MeanBandwidthFraction *= r.BandwidthGBs / again
		run.BandwidthFraction = run.DecodeGBs / again
		r.BandwidthGBs = again
	}
	r.BandwidthGBs1 = max(r.BandwidthGBs1, measureBandwidth(buf, 1))
	buf = nil
	r.rooflineRun = run
	if f.portable {
		fmt.Fprintln(stderr, "kvref bench: the same with the portable Go kernels...")
		kernels.SetPortable(true)
		run, err := rooflineDecodePrefill(m, f, kType, vType, r, max(decodeWindow, f.steps/4), 1, stderr)
		kernels.SetPortable(false)
		if err != nil {
			return r, err
		}
		r.Portable = &run
	}
	return r, nil
}

// rooflineDecodePrefill times steps batch-1 decode steps and prefillPasses 512-token
// prefills (keeping the fastest) with the kernels currently selected.
func rooflineDecodePrefill(m *model.Model, f benchFlags, kType, vType quant.CacheType, limits roofline, steps, prefillPasses int, stderr io.Writer) (rooflineRun, error) {
	var r rooflineRun
	fmt.Fprintf(stderr, "kvref bench: batch-1 decode (%s kernels)...\n", kernels.Implementation())
	df := f
	df.steps = max(steps, decodeWindow)
	dec, err := benchBatch(m, df, 1, kType, vType)
	if err != nil {
		return r, err
	}
	r.DecodeSteps = dec.Steps
	r.DecodeBytesPerToken = dec.WeightBytesPerStep + dec.CacheBytesPerStep
	bestSecs, bestBytes := 0.0, int64(0)
	for i := 0; i+decodeWindow <= len(dec.stepSeconds); i++ {
		secs, bytes := 0.0, int64(0)
		for _, k := range dec.stepSeconds[i : i+decodeWindow] {
			secs += k
		}
		for _, b := range dec.stepBytes[i : i+decodeWindow] {
			bytes += b
		}
		if bestSecs == 0 || secs < bestSecs {
			bestSecs, bestBytes = secs, bytes
		}
	}
	r.DecodeTokensPerSecond = decodeWindow / bestSecs
	r.DecodeGBs = float64(bestBytes) / bestSecs / 1e9
	r.BandwidthFraction = r.DecodeGBs / limits.BandwidthGBs
	r.MeanBandwidthFraction = dec.GBPerSecond / limits.BandwidthGBs

	r.PrefillTokens = min(f.prefill, m.Config.Context-1)
	fmt.Fprintf(stderr, "kvref bench: prefill of %d tokens (%s kernels)...\n", r.PrefillTokens, kernels.Implementation())
	e, err := engine.New(m, engine.Config{Context: r.PrefillTokens + 1, BlockSize: f.blockSize, Threads: f.threads, KType: kType, VType: vType})
	if err != nil {
		return r, err
	}
	defer e.Close()
	rg := rng.New(512)
	prompt := make([]int, r.PrefillTokens)
	for i := range prompt {
		prompt[i] = 3 + int(rg.Uint64()%uint64(m.Config.Vocab-3))
	}
	best := 0.0
	for pass := 0; pass < prefillPasses; pass++ {
		e.Pool.Flush()
		res, err := e.GenerateWith(engine.SchedulerConfig{MaxBatchTokens: r.PrefillTokens}, engine.Request{Prompt: prompt, MaxTokens: 1, IgnoreEOS: true}, func(engine.Token) error { return nil })
		if err != nil {
			return r, err
		}
		if s := res.Prefill.Seconds(); best == 0 || s < best {
			best = s
		}
	}
	r.PrefillSeconds = best
	r.PrefillGFLOPs = prefillFlops(m, r.PrefillTokens) / best / 1e9
	if limits.FMAPeakGFLOPs > 0 {
		r.FMAFraction = r.PrefillGFLOPs / limits.FMAPeakGFLOPs
	}
	if limits.MulAddPeakGFLOPs > 0 {
		r.MulAddFraction = r.PrefillGFLOPs / limits.MulAddPeakGFLOPs
	}
	return r, nil
}

func printRoofline(w io.Writer, r roofline) {
	fmt.Fprintf(w, "roofline (%s kernels, %d threads)\n", r.Kernels, r.Threads)
	fmt.Fprintf(w, "  memory bandwidth     %8.2f GB/s (1 thread %.2f GB/s), best of 10 passes (before and after decode) streaming the buffer through kernels.StreamRead\n", r.BandwidthGBs, r.BandwidthGBs1)
	if r.FMAPeakGFLOPs > 0 {
		fmt.Fprintf(w, "  arithmetic peak      %8.2f GFLOP/s with %d-bit FMA, %.2f with multiply+add (the kernels' unfused arithmetic)\n", r.FMAPeakGFLOPs, r.PeakVectorBits, r.MulAddPeakGFLOPs)
	} else {
		fmt.Fprintln(w, "  arithmetic peak      not measured (no vector peak loop in this build: -tags purego or no AVX)")
	}
	printRooflineRun(w, r, r.rooflineRun)
	if p := r.Portable; p != nil {
		fmt.Fprintln(w, "portable Go kernels (the -tags purego code), same run")
		printRooflineRun(w, r, *p)
		fmt.Fprintf(w, "  fast / portable      decode ×%.2f, prefill ×%.2f\n", r.DecodeTokensPerSecond/p.DecodeTokensPerSecond, p.PrefillSeconds/r.PrefillSeconds)
	}
}

func printRooflineRun(w io.Writer, limits roofline, r rooflineRun) {
	fmt.Fprintf(w, "  decode, batch 1      %8.1f tokens/s, %d B read per token, %.2f GB/s = %.1f%% of the measured bandwidth (best %d-step window; mean of %d steps %.1f%%)\n",
		r.DecodeTokensPerSecond, r.DecodeBytesPerToken, r.DecodeGBs, 100*r.BandwidthFraction, decodeWindow, r.DecodeSteps, 100*r.MeanBandwidthFraction)
	if limits.FMAPeakGFLOPs > 0 {
		fmt.Fprintf(w, "  prefill, %d tokens  %8.2f GFLOP/s in %.3f s = %.1f%% of the FMA peak (%.1f%% of the multiply+add peak)\n",
			r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds, 100*r.FMAFraction, 100*r.MulAddFraction)
	} else {
		fmt.Fprintf(w, "  prefill, %d tokens  %8.2f GFLOP/s in %.3f s\n", r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds)
	}
}
