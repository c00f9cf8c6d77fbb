// Package benchmark measures how fast kvref runs: decode throughput per batch size and
// the largest batch a cache holds (Batch, MemoryBound), the machine's limits and how close
// decode and prefill come to them (MeasureRoofline), and the generation and prompt rates
// that llama.cpp's llama-bench reports, measured the same way (Meter) and interleaved with
// llama-bench itself on the same file (Compare). cmd/kvref's bench command holds only the
// flags and the printing.
package benchmark

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// Setup is what every measurement shares: threads, cache block size and cache storage.
type Setup struct {
	Threads   int             // worker threads; 0: one per core
	BlockSize int             // cache block size; 0: the engine's default
	KType     quant.CacheType // key storage
	VType     quant.CacheType // value storage
}

// Threads returns n, or the number of cores when n ≤ 0 (what the engine uses then).
func Threads(n int) int {
	if n > 0 {
		return n
	}
	return runtime.NumCPU()
}

// BatchResult is one row of the batch curve: batch sequences decoding together.
type BatchResult struct {
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
	// PrefillSeconds is how long the untimed prefill took: every sequence's prompt, until
	// each had its first token.
	PrefillSeconds float64 `json:"prefill_seconds"`
	// Groups, for a model with cache groups (sliding layers beside full ones), are the
	// pool's per-group counts after the timed steps: blocks each group's tables hold.
	Groups []kvcache.GroupStats `json:"groups,omitempty"`
	// Rounds is how many interleaved rounds measured this size (Batches); the row is the
	// median round, and SpeedupsOverBatch1 holds each round's ratio to its batch-1 run.
	Rounds             int       `json:"rounds,omitempty"`
	SpeedupsOverBatch1 []float64 `json:"speedups_over_batch_1_per_round,omitempty"`

	stepSeconds []float64 // each timed step's duration
	stepBytes   []int64   // and the bytes it read (weights and cache)
}

// randomPrompt returns n token ids drawn from r, avoiding the first three ids (the usual
// special tokens).
func randomPrompt(r *rng.SplitMix64, vocab, n int) []int {
	p := make([]int, n)
	for j := range p {
		p[j] = 3 + int(r.Uint64()%uint64(vocab-3))
	}
	return p
}

// Batch prefills batch sequences of prompt random tokens (untimed), then times steps
// decode steps in which all of them advance together.
func Batch(m *model.Model, s Setup, batch, prompt, steps int) (BatchResult, error) {
	return batchRun(m, s, batch, prompt, steps, batch*prompt)
}

// batchRun is Batch with a prefill budget of at most budget tokens a step; it also
// records how long the prefill took (PrefillSeconds). When batch · prompt exceeds the
// budget, the prefill takes several steps, and sequences whose prompt is done decode in
// the later ones: the prefill ends when every sequence has its first token.
func batchRun(m *model.Model, s Setup, batch, prompt, steps, budget int) (BatchResult, error) {
	if batch < 1 || prompt < 1 || steps < 1 {
		return BatchResult{}, fmt.Errorf("benchmark: batch %d, prompt %d and steps %d must all be at least 1", batch, prompt, steps)
	}
	budget = max(1, min(budget, batch*prompt))
	extra := (batch*prompt + budget - 1) / budget // decode steps some sequences may take during a chunked prefill
	ctx := min(m.Config.Context, prompt+steps+8+extra)
	e, err := engine.New(m, engine.Config{Context: ctx, BlockSize: s.BlockSize, Sequences: batch, Threads: s.Threads, KType: s.KType, VType: s.VType})
	if err != nil {
		return BatchResult{}, err
	}
	defer e.Close()
	sc := e.NewScheduler(engine.SchedulerConfig{MaxBatchTokens: budget, MaxSequences: batch, WatermarkBlocks: -1, ReuseLogits: true})
	r := rng.New(uint64(batch))
	for range batch {
		req := engine.Request{Prompt: randomPrompt(r, m.Config.Vocab, prompt), MaxTokens: steps + 4 + extra, IgnoreEOS: true}
		if _, err := sc.Add(req); err != nil {
			return BatchResult{}, err
		}
	}
	// Prefill: every sequence has its first token.
	started := make([]bool, batch)
	waiting := batch
	prefillStart := time.Now()
	for waiting > 0 {
		toks, err := sc.Step()
		if err != nil {
			return BatchResult{}, err
		}
		for _, t := range toks {
			if t.Request >= 0 && t.Request < batch && !started[t.Request] {
				started[t.Request] = true
				waiting--
			}
		}
	}
	bpt := e.Pool().Config().BytesPerToken()
	res := BatchResult{Batch: batch, Steps: steps, WeightBytesPerStep: m.Weights.StepBytes(batch), CacheBytesPerTokenFormula: bpt,
		PrefillSeconds: time.Since(prefillStart).Seconds()}
	var cacheBytes int64
	start := time.Now()
	for i := range steps {
		// Each sequence attends over all its positions in every full layer, over its window
		// in a sliding one: their K and V.
		stepCache := int64(batch) * readBytes(e.Pool().Config(), prompt+1+i)
		cacheBytes += stepCache
		t := time.Now()
		toks, err := sc.Step()
		res.stepSeconds = append(res.stepSeconds, time.Since(t).Seconds())
		res.stepBytes = append(res.stepBytes, res.WeightBytesPerStep+stepCache)
		if err != nil {
			return BatchResult{}, err
		}
		if len(toks) != batch {
			return BatchResult{}, fmt.Errorf("benchmark: step %d produced %d tokens for a batch of %d", i, len(toks), batch)
		}
	}
	secs := time.Since(start).Seconds()
	res.Groups = e.Pool().Stats().Groups
	res.Seconds = secs
	res.TokensPerSecond = float64(batch*steps) / secs
	res.TokensPerSecondPerSeq = float64(steps) / secs
	res.MillisecondsPerStep = 1000 * secs / float64(steps)
	res.CacheBytesPerStep = cacheBytes / int64(steps)
	res.GBPerSecond = float64(res.WeightBytesPerStep*int64(steps)+cacheBytes) / secs / 1e9
	return res, nil
}

// Batches runs Batch for every batch size in order, rounds times over (at least once), the
// sizes interleaved so that a machine slowed down for a while slows every size alike. Each
// size's row is its median round by tokens per second; when the first size is 1, each row's
// speedup over batch 1 is the median of the rounds' ratios (a round's batch-B rate over the
// same round's batch-1 rate), each round's ratio kept in SpeedupsOverBatch1.
func Batches(m *model.Model, s Setup, batches []int, prompt, steps, rounds int, progress func(batch, round int)) ([]BatchResult, error) {
	rounds = max(rounds, 1)
	runs := make([][]BatchResult, len(batches)) // runs[i][k]: batch size i in round k
	for k := range rounds {
		for i, b := range batches {
			if progress != nil {
				progress(b, k)
			}
			r, err := Batch(m, s, b, prompt, steps)
			if err != nil {
				return nil, err
			}
			runs[i] = append(runs[i], r)
		}
	}
	out := make([]BatchResult, len(batches))
	for i := range batches {
		out[i] = medianRun(runs[i])
		out[i].Rounds = rounds
		if batches[0] != 1 {
			if batches[i] == 1 {
				out[i].SpeedupOverBatch1 = 1
			}
			continue
		}
		for k := range rounds {
			out[i].SpeedupsOverBatch1 = append(out[i].SpeedupsOverBatch1, runs[i][k].TokensPerSecond/runs[0][k].TokensPerSecond)
		}
		out[i].SpeedupOverBatch1 = Median(out[i].SpeedupsOverBatch1)
	}
	return out, nil
}

// medianRun returns the run of median tokens per second (of an even number, the slower of
// the middle two).
func medianRun(runs []BatchResult) BatchResult {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b BatchResult) int { return cmp.Compare(a.TokensPerSecond, b.TokensPerSecond) })
	return sorted[(len(sorted)-1)/2]
}

// MemoryBoundBatch is the largest batch of full-context sequences the cache holds.
type MemoryBoundBatch struct {
	Context       int   `json:"context"`
	BlockSize     int   `json:"block_size"`
	CacheBlocks   int   `json:"cache_blocks"`
	CacheBytes    int64 `json:"cache_bytes"`
	BytesPerToken int64 `json:"bytes_per_token"`
	BlocksPerSeq  int   `json:"blocks_per_sequence"`
	// GroupBlocksPerSeq, with cache groups, is BlocksPerSeq group by group
	// (kvcache.Config.GroupBlocksAt: a sliding group holds its window's blocks).
	GroupBlocksPerSeq []int `json:"group_blocks_per_sequence,omitempty"`
	FromFormula       int   `json:"from_formula"`
	ObservedRunning   int   `json:"observed_admitted"`
}

// MemoryBound computes how many ctx-long sequences fit in a cache of blocks blocks (or,
// when blocks ≤ 0, of cacheBytes bytes) from the formula, then observes it: requests of
// that length are submitted until the scheduler leaves one waiting. ctx ≤ 0 means the
// model's context.
func MemoryBound(m *model.Model, s Setup, ctx, blocks int, cacheBytes int64) (MemoryBoundBatch, error) {
	if ctx <= 0 {
		ctx = m.Config.Context
	}
	probe, err := engine.New(m, engine.Config{Context: ctx, BlockSize: s.BlockSize, CacheBlocks: 1, Threads: 1, KType: s.KType, VType: s.VType})
	if err != nil {
		return MemoryBoundBatch{}, err
	}
	cfg := probe.Pool().Config()
	probe.Close()
	if blocks <= 0 {
		blocks = int(cacheBytes / cfg.BytesPerBlock())
	}
	perSeq := cfg.BlocksFor(ctx)
	var groups []int
	if cfg.Groups != nil {
		perSeq = 0
		for g := range cfg.NumGroups() {
			groups = append(groups, cfg.GroupBlocksAt(g, ctx))
			perSeq += groups[g]
		}
	}
	mb := MemoryBoundBatch{Context: ctx, BlockSize: cfg.BlockSize, CacheBlocks: blocks, CacheBytes: int64(blocks) * cfg.BytesPerBlock(),
		BytesPerToken: cfg.BytesPerToken(), BlocksPerSeq: perSeq, GroupBlocksPerSeq: groups, FromFormula: blocks / perSeq}
	if blocks < 1 {
		return mb, fmt.Errorf("benchmark: a cache of %d bytes holds no block of %d bytes", cacheBytes, cfg.BytesPerBlock())
	}
	e, err := engine.New(m, engine.Config{Context: ctx + 1, BlockSize: s.BlockSize, CacheBlocks: blocks, Threads: s.Threads, KType: s.KType, VType: s.VType})
	if err != nil {
		return mb, err
	}
	defer e.Close()
	// Chunk size 1: one admission step computes a single token per sequence, yet admission
	// already accounts for each sequence's whole prompt.
	sc := e.NewScheduler(engine.SchedulerConfig{ChunkSize: 1, MaxBatchTokens: mb.FromFormula + 2, MaxSequences: mb.FromFormula + 2, WatermarkBlocks: -1})
	r := rng.New(99)
	for range mb.FromFormula + 1 {
		if _, err := sc.Add(engine.Request{Prompt: randomPrompt(r, m.Config.Vocab, ctx), MaxTokens: 1, IgnoreEOS: true}); err != nil {
			return mb, err
		}
	}
	if _, err := sc.Step(); err != nil {
		return mb, err
	}
	for i := range mb.FromFormula + 1 {
		if sc.State(i, 0) == engine.Running {
			mb.ObservedRunning++
		}
	}
	return mb, nil
}

// readBytes is what one decode step of a sequence of n tokens reads from the cache: every
// layer's K and V rows of every position, but only the window's in a sliding cache group.
func readBytes(cfg kvcache.Config, n int) int64 {
	var b int64
	for g := range cfg.NumGroups() {
		t := n
		if w := cfg.GroupWindow(g); w > 0 {
			t = min(n, w)
		}
		b += int64(t) * cfg.GroupBytesPerToken()
	}
	return b
}
