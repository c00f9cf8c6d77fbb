package main

import (
	"fmt"
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
	Kernels               string  `json:"kernels"` // the kernel implementation in use
	Threads               int     `json:"threads"`
	BandwidthGBs1         float64 `json:"bandwidth_gb_s_1_thread"`
	BandwidthGBs          float64 `json:"bandwidth_gb_s"` // with Threads threads
	FMAPeakGFLOPs         float64 `json:"fma_peak_gflop_s"`
	MulAddPeakGFLOPs      float64 `json:"mul_add_peak_gflop_s"`
	DecodeBytesPerToken   int64   `json:"decode_bytes_per_token"` // weights + cache read per token
	DecodeTokensPerSecond float64 `json:"decode_tokens_per_second"`
	DecodeGBs             float64 `json:"decode_gb_s"`
	BandwidthFraction     float64 `json:"bandwidth_fraction"`
	PrefillTokens         int     `json:"prefill_tokens"`
	PrefillSeconds        float64 `json:"prefill_seconds"`
	PrefillGFLOPs         float64 `json:"prefill_gflop_s"`
	FMAFraction           float64 `json:"fma_fraction"`
	MulAddFraction        float64 `json:"mul_add_fraction"`
}

// measureBandwidth streams a buffer much larger than the last-level cache through
// kernels.Dot on each of threads goroutines and returns the best of three passes in GB/s.
func measureBandwidth(buf []float32, threads int) float64 {
	best := 0.0
	var sink float32
	var mu sync.Mutex
	for pass := 0; pass < 3; pass++ {
		chunk := len(buf) / threads / 2 * 2
		start := time.Now()
		var wg sync.WaitGroup
		for t := 0; t < threads; t++ {
			part := buf[t*chunk : (t+1)*chunk]
			wg.Add(1)
			go func() {
				defer wg.Done()
				half := len(part) / 2
				v := kernels.Dot(part[:half], part[half:])
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

// runRoofline measures the machine and the model's decode and prefill against it.
func runRoofline(m *model.Model, f benchFlags, kType, vType quant.CacheType, stderr io.Writer) (roofline, error) {
	threads := threadsOr(f.threads)
	r := roofline{Kernels: kernels.Implementation(), Threads: threads}
	fmt.Fprintln(stderr, "kvref bench: measuring memory bandwidth (1 GiB stream)...")
	buf := make([]float32, 1<<28)
	for i := range buf {
		buf[i] = 1
	}
	r.BandwidthGBs1 = measureBandwidth(buf, 1)
	r.BandwidthGBs = measureBandwidth(buf, threads)
	buf = nil
	fmt.Fprintln(stderr, "kvref bench: measuring arithmetic peak...")
	fma, mulAdd, fmaFlops, mulAddFlops := kernels.PeakLoops()
	r.FMAPeakGFLOPs = measurePeak(fma, fmaFlops, threads)
	r.MulAddPeakGFLOPs = measurePeak(mulAdd, mulAddFlops, threads)

	fmt.Fprintln(stderr, "kvref bench: batch-1 decode...")
	dec, err := benchBatch(m, f, 1, kType, vType)
	if err != nil {
		return r, err
	}
	r.DecodeBytesPerToken = dec.WeightBytesPerStep + dec.CacheBytesPerStep
	r.DecodeTokensPerSecond = dec.TokensPerSecond
	r.DecodeGBs = dec.GBPerSecond
	r.BandwidthFraction = dec.GBPerSecond / r.BandwidthGBs

	r.PrefillTokens = min(512, m.Config.Context-1)
	fmt.Fprintf(stderr, "kvref bench: prefill of %d tokens...\n", r.PrefillTokens)
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
	for pass := 0; pass < 2; pass++ {
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
	if r.FMAPeakGFLOPs > 0 {
		r.FMAFraction = r.PrefillGFLOPs / r.FMAPeakGFLOPs
	}
	if r.MulAddPeakGFLOPs > 0 {
		r.MulAddFraction = r.PrefillGFLOPs / r.MulAddPeakGFLOPs
	}
	return r, nil
}

func printRoofline(w io.Writer, r roofline) {
	fmt.Fprintf(w, "roofline (%s kernels, %d threads)\n", r.Kernels, r.Threads)
	fmt.Fprintf(w, "  memory bandwidth     %8.2f GB/s (1 thread %.2f GB/s), streaming 1 GiB through the dot kernel\n", r.BandwidthGBs, r.BandwidthGBs1)
	if r.FMAPeakGFLOPs > 0 {
		fmt.Fprintf(w, "  arithmetic peak      %8.2f GFLOP/s with FMA, %.2f with multiply+add (the kernels' unfused arithmetic)\n", r.FMAPeakGFLOPs, r.MulAddPeakGFLOPs)
	} else {
		fmt.Fprintln(w, "  arithmetic peak      not measured (no vector peak loop in this build: -tags purego or no AVX)")
	}
	fmt.Fprintf(w, "  decode, batch 1      %8.1f tokens/s, %d B read per token, %.2f GB/s = %.1f%% of the measured bandwidth\n",
		r.DecodeTokensPerSecond, r.DecodeBytesPerToken, r.DecodeGBs, 100*r.BandwidthFraction)
	if r.FMAPeakGFLOPs > 0 {
		fmt.Fprintf(w, "  prefill, %d tokens  %8.2f GFLOP/s in %.3f s = %.1f%% of the FMA peak (%.1f%% of the multiply+add peak)\n",
			r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds, 100*r.FMAFraction, 100*r.MulAddFraction)
	} else {
		fmt.Fprintf(w, "  prefill, %d tokens  %8.2f GFLOP/s in %.3f s\n", r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds)
	}
}
