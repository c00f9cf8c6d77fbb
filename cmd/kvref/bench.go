package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/benchmark"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/loader"
)

func init() {
	register(command{"bench", "measure decode throughput against batch size, and the memory-bound batch", benchCmd})
}

// benchFlags are the flags of `kvref bench`.
type benchFlags struct {
	model, shape, batches             string
	cacheDtype, cacheK, cacheV        string
	cpuProfile, kernelLevel           string
	llamaBench                        string
	steps, prompt, threads, blockSize int
	prefill, gen, rounds, reps        int
	ctx, cacheBlocks                  int
	cacheMem, bandwidthBuffer         sizeFlag
	asJSON, roofline, portable        bool
}

func benchCmd(args []string, stdout, stderr io.Writer) error {
	var f benchFlags
	fs := newFlags("bench", stderr)
	fs.StringVar(&f.model, "m", "", "model: a GGUF file, a Hugging Face directory, a llama2.c checkpoint, hf://..., synth:SHAPE; default: a synthetic model of --shape")
	fs.StringVar(&f.shape, "shape", "default", "synthetic shape: default, tiny, stories15m, stories110m, tinyllama-1.1b")
	fs.StringVar(&f.batches, "batches", "1,2,4,8,16,32,64", "batch sizes to measure")
	fs.IntVar(&f.steps, "steps", 16, "decode steps timed per batch size")
	fs.IntVar(&f.prompt, "prompt", 32, "prompt tokens per sequence (prefilled before timing)")
	fs.IntVar(&f.threads, "t", 0, "threads (0: one per core)")
	fs.IntVar(&f.blockSize, "block-size", 16, "cache block size")
	registerCacheTypes(fs, &f.cacheDtype, &f.cacheK, &f.cacheV, "f32")
	fs.IntVar(&f.ctx, "ctx", 0, "context of the sequences in the memory-bound batch line (0: the model's)")
	fs.IntVar(&f.cacheBlocks, "cache-blocks", 0, "cache size in blocks for the memory-bound batch line")
	fs.Var(&f.cacheMem, "cache-mem", "cache size for the memory-bound batch line (default 1GiB; "+plan.SizeHelp+")")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.Var(&f.bandwidthBuffer, "bandwidth-buffer", "--roofline: size of the buffer streamed to measure memory bandwidth (default 1GiB; make it much larger than the last-level cache)")
	fs.IntVar(&f.prefill, "prefill", 512, "--roofline, --vs-llama-bench: prompt tokens of the timed prefill (pp; capped at the model's context - 1 by --roofline)")
	fs.BoolVar(&f.portable, "portable", true, "--roofline: also measure decode and prefill with the portable Go kernels (what -tags purego runs)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed runs to this file (read it with go tool pprof)")
	fs.BoolVar(&f.roofline, "roofline", false, "measure memory bandwidth and arithmetic peak, then batch-1 decode and a 512-token prefill against them")
	fs.StringVar(&f.llamaBench, "vs-llama-bench", "", "run llama.cpp's llama-bench at this path on the same GGUF file (-m), interleaved with kvref, and print the ratios")
	fs.IntVar(&f.gen, "tg", 64, "--vs-llama-bench: tokens of the generation test (llama-bench -p 0 -n N; 0: none)")
	fs.IntVar(&f.rounds, "rounds", 3, "--vs-llama-bench: interleaved rounds")
	fs.IntVar(&f.reps, "reps", 3, "--vs-llama-bench: repetitions per round on each engine (llama-bench -r)")
	fs.StringVar(&f.kernelLevel, "kernels", "", "kernel level: "+strings.Join(kernels.Levels(), ", ")+" (default: everything the CPU has; avx2 on an AVX-512 machine runs what an AVX2-only one runs)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kvref bench [-m MODEL | --shape NAME] [flags]")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	batches, err := parseInts(f.batches)
	if err != nil {
		return fmt.Errorf("--batches: %w", err)
	}
	if f.llamaBench != "" && !flagSet(fs, "cache-dtype") && f.cacheK == "" && f.cacheV == "" {
		f.cacheDtype = "f16" // llama-bench's default cache, and the only float one this version takes besides bf16
	}
	kType, vType, err := cacheTypes(f.cacheDtype, f.cacheK, f.cacheV)
	if err != nil {
		return err
	}
	if f.kernelLevel != "" {
		prev, err := kernels.Restrict(f.kernelLevel)
		if err != nil {
			return fmt.Errorf("--kernels: %w", err)
		}
		defer kernels.Restrict(prev)
	}
	if f.llamaBench != "" {
		if err := checkGGUF(f.model); err != nil {
			return err
		}
	}
	ref := f.model
	if ref == "" {
		ref = loader.SynthPrefix + f.shape
		fmt.Fprintf(stderr, "kvref bench: generating the %s shape (random weights)...\n", f.shape)
	}
	m, err := loadModel(ref, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	setup := benchmark.Setup{Threads: f.threads, BlockSize: f.blockSize, KType: kType, VType: vType}

	switch {
	case f.llamaBench != "":
		return benchVsLlama(m, f, setup, stdout, stderr)
	case f.roofline:
		return benchRoofline(m, f, setup, stdout, stderr)
	}
	results, err := benchmark.Batches(m, setup, batches, f.prompt, f.steps, func(b int) { fmt.Fprintf(stderr, "kvref bench: batch %d...\n", b) })
	if err != nil {
		return err
	}
	cacheBytes := int64(1 << 30)
	if f.cacheMem.set() {
		cacheBytes = f.cacheMem.bytes
	}
	mb, err := benchmark.MemoryBound(m, setup, f.ctx, f.cacheBlocks, cacheBytes)
	if err != nil {
		if mb.CacheBlocks < 1 {
			return fmt.Errorf("bench: the cache holds no block; raise --cache-mem (%w)", err)
		}
		return err
	}
	if f.asJSON {
		return printJSON(stdout, map[string]any{"model": m.Source, "threads": benchmark.Threads(f.threads), "batches": results, "memory_bound_batch": mb})
	}
	fmt.Fprintf(stdout, "model %s, weights %.1f MiB, cache %s, %d B/token, block size %d, threads %d\n\n",
		m.Source, float64(m.Weights.Bytes())/(1<<20), kType, results[0].CacheBytesPerTokenFormula, f.blockSize, benchmark.Threads(f.threads))
	fmt.Fprintf(stdout, "%6s %12s %12s %10s %14s %14s %9s %9s\n", "batch", "tok/s", "tok/s/seq", "ms/step", "weights B/step", "cache B/step", "GB/s", "×batch1")
	for _, r := range results {
		fmt.Fprintf(stdout, "%6d %12.1f %12.1f %10.2f %14d %14d %9.2f %9.2f\n", r.Batch, r.TokensPerSecond, r.TokensPerSecondPerSeq,
			r.MillisecondsPerStep, r.WeightBytesPerStep, r.CacheBytesPerStep, r.GBPerSecond, r.SpeedupOverBatch1)
	}
	fmt.Fprintf(stdout, "\nmemory-bound batch: a %s cache (%d blocks of %d tokens, %d B/token) holds %d sequences of %d tokens (%d blocks each) by the formula; the scheduler admitted %d\n",
		plan.FormatSize(mb.CacheBytes), mb.CacheBlocks, mb.BlockSize, mb.BytesPerToken, mb.FromFormula, mb.Context, mb.BlocksPerSeq, mb.ObservedRunning)
	return nil
}

// flagSet reports whether the flag of that name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// checkGGUF returns an error unless path names a GGUF file, which llama-bench needs.
func checkGGUF(path string) error {
	if path == "" || loader.KindOf(path) != loader.File {
		return fmt.Errorf("--vs-llama-bench: -m must name a GGUF file that both engines read, got %q", path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--vs-llama-bench: %w", err)
	}
	defer fh.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(fh, magic); err != nil || string(magic) != gguf.Magic {
		return fmt.Errorf("--vs-llama-bench: %s is not a GGUF file (llama-bench reads only GGUF; convert it with kvref quantize or llama.cpp's tools)", path)
	}
	return nil
}

// benchRoofline runs and prints --roofline.
func benchRoofline(m *model.Model, f benchFlags, setup benchmark.Setup, stdout, stderr io.Writer) error {
	bufBytes := int64(1 << 30)
	if f.bandwidthBuffer.set() {
		bufBytes = f.bandwidthBuffer.bytes
		if bufBytes < 1<<20 {
			return fmt.Errorf("--bandwidth-buffer %s: the bandwidth probe needs at least 1MiB, and should be much larger than the last-level cache", f.bandwidthBuffer.text)
		}
	}
	if f.prefill < 1 {
		return fmt.Errorf("--prefill %d: the timed prefill needs at least one token", f.prefill)
	}
	r, err := benchmark.MeasureRoofline(m, benchmark.RooflineConfig{Setup: setup, Steps: f.steps, Prompt: f.prompt, Prefill: f.prefill,
		BandwidthBytes: bufBytes, Portable: f.portable, Progress: stderr})
	if err != nil {
		return err
	}
	if f.asJSON {
		out := map[string]any{"model": m.Source, "roofline": r, "bandwidth_fraction": r.BandwidthFraction, "fma_fraction": r.FMAFraction}
		if r.Portable != nil {
			out["portable_bandwidth_fraction"] = r.Portable.BandwidthFraction
			out["portable_fma_fraction"] = r.Portable.FMAFraction
		}
		return printJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "model %s, weights %.1f MiB, cache %s\n", m.Source, float64(m.Weights.Bytes())/(1<<20), setup.KType)
	printRoofline(stdout, r)
	return nil
}

func printRoofline(w io.Writer, r benchmark.Roofline) {
	fmt.Fprintf(w, "roofline (%s kernels, %d threads) on %s\n", r.Kernels, r.Threads, benchmark.CPUName())
	fmt.Fprintf(w, "  memory bandwidth     %8.2f GB/s (1 thread %.2f GB/s), best of 10 passes (before and after decode) streaming the buffer through kernels.StreamRead\n", r.BandwidthGBs, r.BandwidthGBs1)
	if r.FMAPeakGFLOPs > 0 {
		fmt.Fprintf(w, "  arithmetic peak      %8.2f GFLOP/s with %d-bit FMA, %.2f with multiply+add (the kernels' unfused arithmetic)\n", r.FMAPeakGFLOPs, r.PeakVectorBits, r.MulAddPeakGFLOPs)
	} else {
		fmt.Fprintln(w, "  arithmetic peak      not measured (no vector peak loop in this build: -tags purego or no AVX)")
	}
	printRooflineRun(w, r, r.RooflineRun)
	fmt.Fprintln(w, "  kernels (the fast run; the portable run uses every twin):")
	for _, c := range kernels.ReportLines(r.Implementations) {
		fmt.Fprintln(w, "    "+c)
	}
	if p := r.Portable; p != nil {
		fmt.Fprintln(w, "portable Go kernels (the -tags purego code), same run")
		printRooflineRun(w, r, *p)
		fmt.Fprintf(w, "  fast / portable      decode ×%.2f, prefill ×%.2f\n", r.DecodeTokensPerSecond/p.DecodeTokensPerSecond, p.PrefillSeconds/r.PrefillSeconds)
	}
}

func printRooflineRun(w io.Writer, limits benchmark.Roofline, r benchmark.RooflineRun) {
	fmt.Fprintf(w, "  decode, batch 1      %8.1f tokens/s, %d B read per token, %.2f GB/s = %.1f%% of the measured bandwidth (best %d-step window; mean of %d steps %.1f%%)\n",
		r.DecodeTokensPerSecond, r.DecodeBytesPerToken, r.DecodeGBs, 100*r.BandwidthFraction, benchmark.DecodeWindow, r.DecodeSteps, 100*r.MeanBandwidthFraction)
	if limits.FMAPeakGFLOPs > 0 {
		fmt.Fprintf(w, "  prefill, %d tokens  %8.2f GFLOP/s in %.3f s = %.1f%% of the FMA peak (%.1f%% of the multiply+add peak)\n",
			r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds, 100*r.FMAFraction, 100*r.MulAddFraction)
	} else {
		fmt.Fprintf(w, "  prefill, %d tokens  %8.2f GFLOP/s in %.3f s\n", r.PrefillTokens, r.PrefillGFLOPs, r.PrefillSeconds)
	}
}

// benchVsLlama runs and prints --vs-llama-bench.
func benchVsLlama(m *model.Model, f benchFlags, setup benchmark.Setup, stdout, stderr io.Writer) error {
	if setup.KType != setup.VType {
		return fmt.Errorf("--vs-llama-bench compares one cache type for keys and values, not %s keys and %s values: give --cache-dtype T alone", setup.KType, setup.VType)
	}
	ct, err := benchmark.LlamaCacheType(setup.KType.String())
	if err != nil {
		return fmt.Errorf("--cache-dtype: %w", err)
	}
	c, err := benchmark.Compare(context.Background(), m, benchmark.CompareConfig{
		Setup: setup, Model: f.model, LlamaBench: benchmark.LlamaBench{Path: f.llamaBench, CacheType: ct},
		Rounds: f.rounds, Reps: f.reps, Gen: f.gen, Prompt: f.prefill, Progress: stderr})
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(stdout, map[string]any{"model": m.Source, "comparison": c})
	}
	fmt.Fprintf(stdout, "model %s (llama.cpp: %s), cache %s, %d threads, %d interleaved rounds of %d repetitions\n", m.Source, c.ModelType, c.CacheType, c.Threads, c.Rounds, f.reps)
	fmt.Fprintf(stdout, "CPU %s; kvref %s kernels; llama.cpp %s (%s)\n\n", c.CPU, c.Kernels, c.LlamaBuild, c.LlamaPath)
	fmt.Fprintf(stdout, "%-7s %22s %22s %26s\n", "test", "llama.cpp tok/s", "kvref tok/s", "kvref / llama.cpp")
	for _, t := range c.Tests {
		fmt.Fprintf(stdout, "%-7s %22s %22s %26s\n", t.Name, medianRange(t.Llama, "%.2f"), medianRange(t.Kvref, "%.2f"), medianRange(t.Ratios, "%.3f"))
	}
	fmt.Fprintln(stdout, "\n(medians of the rounds, the range of the rounds in brackets; the ratio column is the median of each round's ratio)")
	return nil
}

// medianRange formats the median of v and, for several values, their range.
func medianRange(v []float64, format string) string {
	s := fmt.Sprintf(format, benchmark.Median(v))
	if len(v) > 1 {
		lo, hi := v[0], v[0]
		for _, x := range v {
			lo, hi = min(lo, x), max(hi, x)
		}
		s += fmt.Sprintf(" ["+format+"–"+format+"]", lo, hi)
	}
	return s
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", p)
		}
		out = append(out, v)
	}
	return out, nil
}
