package main

import (
	"encoding/json"
	"fmt"
	"github.com/kvref/kvref/internal/plan"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

func init() {
	register(command{"bench", "measure decode throughput against batch size, and the memory-bound batch", benchCmd})
}

// benchFlags are the flags of `kvref bench`.
type benchFlags struct {
	model, shape, batches             string
	cacheDtype, cacheK, cacheV        string
	cpuProfile                        string
	steps, prompt, threads, blockSize int
	prefill                           int
	ctx, cacheBlocks                  int
	cacheMem, bandwidthBuffer         sizeFlag
	asJSON, roofline, portable        bool
}

// batchResult is one row of the batch curve.
type batchResult struct {
	Batch                     int     `json:"batch"`
	Steps                     int     `json:"steps"`
	Seconds                   float64 `json:"seconds"`
	TokensPerSecond           float64 `json:"tokens_per_second"`
	TokensPerSecondPerSeq     float64 `json:"tokens_per_second_per_sequence"`
	WeightBytesPerStep        int64   `json:"weight_bytes_per_step"`
	CacheBytesPerStep         int64   `json:"cache_bytes_per_step"`
	GBPerSecond               float64 `json:"gb_per_second"`
	SpeedupOverBatch1         float64 `json:"speedup_over_batch_1"`
	MillisecondsPerStep       float64 `json:"ms_per_step"`
	CacheBytesPerTokenFormula int64   `json:"bytes_per_token"`

	stepSeconds []float64 // each timed step's duration
	stepBytes   []int64   // and the bytes it read (weights and cache)
}

// memoryBoundBatch is the largest batch of full-context sequences the cache holds.
type memoryBoundBatch struct {
	Context         int   `json:"context"`
	BlockSize       int   `json:"block_size"`
	CacheBlocks     int   `json:"cache_blocks"`
	CacheBytes      int64 `json:"cache_bytes"`
	BytesPerToken   int64 `json:"bytes_per_token"`
	BlocksPerSeq    int   `json:"blocks_per_sequence"`
	FromFormula     int   `json:"from_formula"`
	ObservedRunning int   `json:"observed_admitted"`
}

func benchCmd(args []string, stdout, stderr io.Writer) error {
	var f benchFlags
	fs := newFlags("bench", stderr)
	fs.StringVar(&f.model, "m", "", "model file; default: a synthetic model of --shape")
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
	fs.IntVar(&f.prefill, "prefill", 512, "--roofline: prompt tokens of the timed prefill (capped at the model's context - 1)")
	fs.BoolVar(&f.portable, "portable", true, "--roofline: also measure decode and prefill with the portable Go kernels (what -tags purego runs)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed runs to this file (read it with go tool pprof)")
	fs.BoolVar(&f.roofline, "roofline", false, "measure memory bandwidth and arithmetic peak, then batch-1 decode and a 512-token prefill against them")
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
	kType, vType, err := cacheTypes(f.cacheDtype, f.cacheK, f.cacheV)
	if err != nil {
		return err
	}
	var m *model.Model
	if f.model != "" {
		m, err = model.LoadGGUF(f.model)
	} else {
		var shape synth.Shape
		if shape, err = synth.ShapeByName(f.shape); err == nil {
			fmt.Fprintf(stderr, "kvref bench: generating the %s shape (random weights)...\n", f.shape)
			m, err = shape.Model()
		}
	}
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

	if f.roofline {
		r, err := runRoofline(m, f, kType, vType, stderr)
		if err != nil {
			return err
		}
		if f.asJSON {
			out := map[string]any{"model": m.Source, "roofline": r, "bandwidth_fraction": r.BandwidthFraction, "fma_fraction": r.FMAFraction}
			if r.Portable != nil {
				out["portable_bandwidth_fraction"] = r.Portable.BandwidthFraction
				out["portable_fma_fraction"] = r.Portable.FMAFraction
			}
			b, _ := json.Marshal(out)
			fmt.Fprintln(stdout, string(b))
			return nil
		}
		fmt.Fprintf(stdout, "model %s, weights %.1f MiB, cache %s\n", m.Source, float64(m.Weights.Bytes())/(1<<20), kType)
		printRoofline(stdout, r)
		return nil
	}

	var results []batchResult
	for _, b := range batches {
		fmt.Fprintf(stderr, "kvref bench: batch %d...\n", b)
		r, err := benchBatch(m, f, b, kType, vType)
		if err != nil {
			return err
		}
		if len(results) > 0 && results[0].Batch == 1 {
			r.SpeedupOverBatch1 = r.TokensPerSecond / results[0].TokensPerSecond
		} else if b == 1 {
			r.SpeedupOverBatch1 = 1
		}
		results = append(results, r)
	}
	mb, err := benchMemoryBound(m, f, kType, vType)
	if err != nil {
		return err
	}
	if f.asJSON {
		b, _ := json.Marshal(map[string]any{"model": m.Source, "threads": threadsOr(f.threads), "batches": results, "memory_bound_batch": mb})
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	fmt.Fprintf(stdout, "model %s, weights %.1f MiB, cache %s, %d B/token, block size %d, threads %d\n\n",
		m.Source, float64(m.Weights.Bytes())/(1<<20), kType, results[0].CacheBytesPerTokenFormula, f.blockSize, threadsOr(f.threads))
	fmt.Fprintf(stdout, "%6s %12s %12s %10s %14s %14s %9s %9s\n", "batch", "tok/s", "tok/s/seq", "ms/step", "weights B/step", "cache B/step", "GB/s", "×batch1")
	for _, r := range results {
		fmt.Fprintf(stdout, "%6d %12.1f %12.1f %10.2f %14d %14d %9.2f %9.2f\n", r.Batch, r.TokensPerSecond, r.TokensPerSecondPerSeq,
			r.MillisecondsPerStep, r.WeightBytesPerStep, r.CacheBytesPerStep, r.GBPerSecond, r.SpeedupOverBatch1)
	}
	fmt.Fprintf(stdout, "\nmemory-bound batch: a %s cache (%d blocks of %d tokens, %d B/token) holds %d sequences of %d tokens (%d blocks each) by the formula; the scheduler admitted %d\n",
		plan.FormatSize(mb.CacheBytes), mb.CacheBlocks, mb.BlockSize, mb.BytesPerToken, mb.FromFormula, mb.Context, mb.BlocksPerSeq, mb.ObservedRunning)
	return nil
}

func threadsOr(t int) int {
	if t > 0 {
		return t
	}
	return runtime.NumCPU()
}

// benchBatch prefills b sequences, then times f.steps decode steps in which all of them
// advance together.
func benchBatch(m *model.Model, f benchFlags, b int, kType, vType quant.CacheType) (batchResult, error) {
	ctx := min(m.Config.Context, f.prompt+f.steps+8)
	e, err := engine.New(m, engine.Config{Context: ctx, BlockSize: f.blockSize, Sequences: b, Threads: f.threads, KType: kType, VType: vType})
	if err != nil {
		return batchResult{}, err
	}
	defer e.Close()
	s := e.NewScheduler(engine.SchedulerConfig{MaxBatchTokens: b * f.prompt, MaxSequences: b, WatermarkBlocks: -1})
	r := rng.New(uint64(b))
	for i := 0; i < b; i++ {
		prompt := make([]int, f.prompt)
		for j := range prompt {
			prompt[j] = 3 + int(r.Uint64()%uint64(m.Config.Vocab-3))
		}
		if _, err := s.Add(engine.Request{Prompt: prompt, MaxTokens: f.steps + 4, IgnoreEOS: true}); err != nil {
			return batchResult{}, err
		}
	}
	// Prefill (untimed): every sequence has its first token.
	for s.Stats().DecodeTokens == 0 {
		if _, err := s.Step(); err != nil {
			return batchResult{}, err
		}
	}
	bpt := e.Pool.Config().BytesPerToken()
	res := batchResult{Batch: b, Steps: f.steps, WeightBytesPerStep: m.Weights.Bytes(), CacheBytesPerTokenFormula: bpt}
	var cacheBytes int64
	start := time.Now()
	for i := 0; i < f.steps; i++ {
		// Each sequence attends over all its positions: their K and V in every layer.
		stepCache := int64(b) * int64(f.prompt+1+i) * bpt
		cacheBytes += stepCache
		stepStart := time.Now()
		toks, err := s.Step()
		res.stepSeconds = append(res.stepSeconds, time.Since(stepStart).Seconds())
		res.stepBytes = append(res.stepBytes, res.WeightBytesPerStep+stepCache)
		if err != nil {
			return batchResult{}, err
		}
		if len(toks) != b {
			return batchResult{}, fmt.Errorf("bench: step %d produced %d tokens for a batch of %d", i, len(toks), b)
		}
	}
	secs := time.Since(start).Seconds()
	res.Seconds = secs
	res.TokensPerSecond = float64(b*f.steps) / secs
	res.TokensPerSecondPerSeq = float64(f.steps) / secs
	res.MillisecondsPerStep = 1000 * secs / float64(f.steps)
	res.CacheBytesPerStep = cacheBytes / int64(f.steps)
	res.GBPerSecond = float64(res.WeightBytesPerStep*int64(f.steps)+cacheBytes) / secs / 1e9
	return res, nil
}

// benchMemoryBound computes how many --ctx-long sequences fit in the cache from the
// formula, then observes it: requests of that length are submitted until the scheduler
// leaves one waiting.
func benchMemoryBound(m *model.Model, f benchFlags, kType, vType quant.CacheType) (memoryBoundBatch, error) {
	ctx := f.ctx
	if ctx <= 0 {
		ctx = m.Config.Context
	}
	probe, err := engine.New(m, engine.Config{Context: ctx, BlockSize: f.blockSize, CacheBlocks: 1, Threads: 1, KType: kType, VType: vType})
	if err != nil {
		return memoryBoundBatch{}, err
	}
	cfg := probe.Pool.Config()
	probe.Close()
	blocks := f.cacheBlocks
	if blocks <= 0 {
		mem := int64(1 << 30)
		if f.cacheMem.set() {
			mem = f.cacheMem.bytes
		}
		blocks = int(mem / cfg.BytesPerBlock())
	}
	perSeq := cfg.BlocksFor(ctx)
	mb := memoryBoundBatch{Context: ctx, BlockSize: cfg.BlockSize, CacheBlocks: blocks, CacheBytes: int64(blocks) * cfg.BytesPerBlock(),
		BytesPerToken: cfg.BytesPerToken(), BlocksPerSeq: perSeq, FromFormula: blocks / perSeq}
	if blocks < 1 {
		return mb, fmt.Errorf("bench: the cache holds no block of %d bytes; raise --cache-mem", cfg.BytesPerBlock())
	}
	e, err := engine.New(m, engine.Config{Context: ctx + 1, BlockSize: f.blockSize, CacheBlocks: blocks, Threads: f.threads, KType: kType, VType: vType})
	if err != nil {
		return mb, err
	}
	defer e.Close()
	// Chunk size 1: one admission step computes a single token per sequence, yet admission
	// already accounts for each sequence's whole prompt.
	s := e.NewScheduler(engine.SchedulerConfig{ChunkSize: 1, MaxBatchTokens: mb.FromFormula + 2, MaxSequences: mb.FromFormula + 2, WatermarkBlocks: -1})
	r := rng.New(99)
	for i := 0; i < mb.FromFormula+1; i++ {
		prompt := make([]int, ctx)
		for j := range prompt {
			prompt[j] = 3 + int(r.Uint64()%uint64(m.Config.Vocab-3))
		}
		if _, err := s.Add(engine.Request{Prompt: prompt, MaxTokens: 1, IgnoreEOS: true}); err != nil {
			return mb, err
		}
	}
	if _, err := s.Step(); err != nil {
		return mb, err
	}
	for i := 0; i < mb.FromFormula+1; i++ {
		if s.State(i, 0) == engine.Running {
			mb.ObservedRunning++
		}
	}
	return mb, nil
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
