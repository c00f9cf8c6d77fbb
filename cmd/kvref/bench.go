package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

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
	modelFlags
	engineFlags
	shape, batches             string
	cpuProfile, kernelLevel    string
	llamaBench                 string
	steps, prompt              int
	prefill, gen, rounds, reps int
	cacheMem, bandwidthBuffer  sizeFlag
	asJSON, roofline, portable bool
	batched                    batchedFlags // --vs-llama-batched-bench (bench_batched.go)
}

func benchCmd(args []string, stdout, stderr io.Writer) error {
	var f benchFlags
	fs := newFlags("bench", stderr, "usage: kvref bench [-m MODEL | --shape NAME] [flags]")
	f.modelFlags.register(fs, "model: a GGUF file, a Hugging Face directory, a llama2.c checkpoint, hf://..., synth:SHAPE; default: a synthetic model of --shape")
	f.engineFlags.registerWith(fs, "context of the sequences in the memory-bound batch line (0: the model's)", "cache size in blocks for the memory-bound batch line")
	fs.StringVar(&f.shape, "shape", "default", "synthetic shape: default, tiny, stories15m, stories110m, tinyllama-1.1b")
	fs.StringVar(&f.batches, "batches", "1,2,4,8,16,32,64", "batch sizes to measure")
	fs.IntVar(&f.steps, "steps", 16, "decode steps timed per batch size")
	fs.IntVar(&f.prompt, "prompt", 32, "prompt tokens per sequence (prefilled before timing)")
	fs.Var(&f.cacheMem, "cache-mem", "cache size for the memory-bound batch line (default 1GiB; "+plan.SizeHelp+")")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.Var(&f.bandwidthBuffer, "bandwidth-buffer", "--roofline: size of the buffer streamed to measure memory bandwidth (default 1GiB; make it much larger than the last-level cache)")
	fs.IntVar(&f.prefill, "prefill", 512, "--roofline, --vs-llama-bench: prompt tokens of the timed prefill (pp; capped at the model's context - 1 by --roofline)")
	fs.BoolVar(&f.portable, "portable", true, "--roofline: also measure decode and prefill with the portable Go kernels (what -tags purego runs)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed runs to this file (read it with go tool pprof)")
	fs.BoolVar(&f.roofline, "roofline", false, "measure memory bandwidth and arithmetic peak, then batch-1 decode and a 512-token prefill against them")
	fs.StringVar(&f.llamaBench, "vs-llama-bench", "", "run llama.cpp's llama-bench at this path on the same GGUF file (-m), interleaved with kvref, and print the ratios")
	vsNode := registerVsNode(fs) // bench_node.go
	fs.IntVar(&f.gen, "tg", 64, "--vs-llama-bench: tokens of the generation test (llama-bench -p 0 -n N; 0: none)")
	fs.IntVar(&f.rounds, "rounds", 0, "interleaved rounds: of llama-bench and kvref with --vs-llama-bench (default 3), of the batch sizes otherwise (default 1; the median round is shown and ×batch1 is the median of the rounds' ratios)")
	fs.IntVar(&f.reps, "reps", 3, "--vs-llama-bench: repetitions per round on each engine (llama-bench -r)")
	f.batched.register(fs)
	fs.StringVar(&f.kernelLevel, "kernels", "", "kernel level: "+strings.Join(kernels.Levels(), ", ")+" (default: everything the CPU has; avx2 on an AVX-512 machine runs what an AVX2-only one runs)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if f.rounds < 0 {
		return fmt.Errorf("--rounds %d: give a number of rounds of at least 1 (or leave it out)", f.rounds)
	}
	batches, err := benchmark.ParseInts(f.batches)
	if err != nil {
		return fmt.Errorf("--batches: %w", err)
	}
	if (f.llamaBench != "" || f.batched.path != "") && !flagSet(fs, "cache-dtype") && f.k == "" && f.v == "" {
		f.dtype = "f16" // llama-bench's default cache, and the only float one this version takes besides bf16
	}
	kType, vType, err := cacheTypes(f.dtype, f.k, f.v)
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
		if err := benchmark.CheckGGUF(f.ref); err != nil {
			return err
		}
	}
	if f.ref == "" {
		f.ref = loader.SynthPrefix + f.shape
		fmt.Fprintf(stderr, "kvref bench: generating the %s shape (random weights)...\n", f.shape)
	}
	m, err := f.modelFlags.open(stderr)
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
	steal := benchmark.StartSteal()

	switch {
	case *vsNode != "":
		return benchVsNode(m, fs, f, *vsNode, setup, steal, stdout, stderr)
	case f.llamaBench != "":
		return benchVsLlama(m, f, setup, steal, stdout, stderr)
	case f.batched.path != "":
		return benchBatched(m, f, setup, steal, stdout, stderr)
	case f.roofline:
		return benchRoofline(m, f, setup, steal, stdout, stderr)
	}
	rounds := max(f.rounds, 1)
	results, err := benchmark.Batches(m, setup, batches, f.prompt, f.steps, rounds, func(b, k int) {
		if rounds > 1 {
			fmt.Fprintf(stderr, "kvref bench: round %d of %d, batch %d...\n", k+1, rounds, b)
		} else {
			fmt.Fprintf(stderr, "kvref bench: batch %d...\n", b)
		}
	})
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
		return printJSON(stdout, map[string]any{"model": m.Source, "threads": benchmark.Threads(f.threads), "batches": results, "memory_bound_batch": mb, "host_steal_fraction": steal.JSON()})
	}
	fmt.Fprintf(stdout, "model %s, weights %.1f MiB, cache %s, %d B/token, block size %d, threads %d\n\n",
		m.Source, float64(m.Weights.Bytes())/(1<<20), kType, results[0].CacheBytesPerTokenFormula, f.blockSize, benchmark.Threads(f.threads))
	benchmark.WriteBatches(stdout, results, mb)
	benchmark.WriteSteal(stdout, steal)
	return nil
}

// benchRoofline runs and prints --roofline.
func benchRoofline(m *model.Model, f benchFlags, setup benchmark.Setup, steal *benchmark.StealMeter, stdout, stderr io.Writer) error {
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
		return printJSON(stdout, r.JSON(m.Source, steal))
	}
	fmt.Fprintf(stdout, "model %s, weights %.1f MiB, cache %s\n", m.Source, float64(m.Weights.Bytes())/(1<<20), setup.KType)
	benchmark.WriteRoofline(stdout, r)
	benchmark.WriteSteal(stdout, steal)
	return nil
}

// benchVsLlama runs and prints --vs-llama-bench.
func benchVsLlama(m *model.Model, f benchFlags, setup benchmark.Setup, steal *benchmark.StealMeter, stdout, stderr io.Writer) error {
	if setup.KType != setup.VType {
		return fmt.Errorf("--vs-llama-bench compares one cache type for keys and values, not %s keys and %s values: give --cache-dtype T alone", setup.KType, setup.VType)
	}
	ct, err := benchmark.LlamaCacheType(setup.KType.String())
	if err != nil {
		return fmt.Errorf("--cache-dtype: %w", err)
	}
	c, err := benchmark.Compare(context.Background(), m, benchmark.CompareConfig{
		Setup: setup, Model: f.ref, LlamaBench: benchmark.LlamaBench{Path: f.llamaBench, CacheType: ct},
		Rounds: cmp.Or(f.rounds, 3), Reps: f.reps, Gen: f.gen, Prompt: f.prefill, Progress: stderr})
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(stdout, map[string]any{"model": m.Source, "comparison": c, "host_steal_fraction": steal.JSON()})
	}
	fmt.Fprintf(stdout, "model %s (llama.cpp: %s), cache %s, %d threads, %d interleaved rounds of %d repetitions\n", m.Source, c.ModelType, c.CacheType, c.Threads, c.Rounds, f.reps)
	benchmark.WriteComparison(stdout, c)
	benchmark.WriteSteal(stdout, steal)
	return nil
}
