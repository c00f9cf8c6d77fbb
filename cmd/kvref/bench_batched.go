package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kvref/kvref/internal/benchmark"
	"github.com/kvref/kvref/model"
)

// batchedFlags are the flags of `kvref bench --vs-llama-batched-bench`, named as
// llama-batched-bench names them.
type batchedFlags struct {
	path        string
	npp, npl    string
	ntg, budget int
	noBandwidth bool
}

// register adds the --vs-llama-batched-bench flags to fs.
func (f *batchedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.path, "vs-llama-batched-bench", "", "run llama.cpp's llama-batched-bench at this path and kvref on the same GGUF file (-m): B sequences of D distinct prompt tokens, then N decode steps, interleaved; prints S_TG, S_PP, their ratios and kvref's step against the bandwidth")
	fs.StringVar(&f.npp, "npp", "960", "--vs-llama-batched-bench: prompt tokens per sequence, the depth D (comma-separated list)")
	fs.IntVar(&f.ntg, "ntg", 32, "--vs-llama-batched-bench: decode steps timed, N")
	fs.StringVar(&f.npl, "npl", "1,4,16", "--vs-llama-batched-bench: sequences decoding together, B (comma-separated list)")
	fs.IntVar(&f.budget, "prefill-budget", 16384, "--vs-llama-batched-bench: kvref's most prefill tokens in one step (B·D above it prefills in several steps)")
	fs.BoolVar(&f.noBandwidth, "no-bandwidth", false, "--vs-llama-batched-bench: skip the bandwidth probes around each kvref run (and the fraction of the bandwidth)")
}

// benchBatched runs and prints --vs-llama-batched-bench.
func benchBatched(m *model.Model, f benchFlags, setup benchmark.Setup, steal *benchmark.StealMeter, stdout, stderr io.Writer) error {
	if err := benchmark.CheckGGUF(f.ref); err != nil {
		return fmt.Errorf("--vs-llama-batched-bench: %w", err)
	}
	if setup.KType != setup.VType {
		return fmt.Errorf("--vs-llama-batched-bench compares one cache type for keys and values, not %s keys and %s values: give --cache-dtype T alone", setup.KType, setup.VType)
	}
	ct, fa, err := benchmark.LlamaBatchedCacheType(setup.KType.String())
	if err != nil {
		return fmt.Errorf("--cache-dtype: %w", err)
	}
	depths, err := benchmark.ParseInts(f.batched.npp)
	if err != nil {
		return fmt.Errorf("--npp: %w", err)
	}
	batches, err := benchmark.ParseInts(f.batched.npl)
	if err != nil {
		return fmt.Errorf("--npl: %w", err)
	}
	if f.batched.ntg < 1 {
		return fmt.Errorf("--ntg %d: give at least one decode step", f.batched.ntg)
	}
	var points []benchmark.BatchedPoint
	for _, d := range depths {
		for _, b := range batches {
			points = append(points, benchmark.BatchedPoint{Depth: d, Gen: f.batched.ntg, Batch: b})
		}
	}
	bw := int64(1 << 30)
	if f.bandwidthBuffer.set() {
		bw = f.bandwidthBuffer.bytes
	}
	if f.batched.noBandwidth {
		bw = 0
	}
	c, err := benchmark.CompareBatched(context.Background(), m, benchmark.BatchedConfig{
		Setup: setup, Model: f.ref, Llama: benchmark.LlamaBatchedBench{Path: f.batched.path, CacheType: ct, FlashAttn: fa},
		Points: points, Rounds: cmp.Or(f.rounds, 1), PrefillBudget: f.batched.budget, BandwidthBytes: bw, Progress: stderr})
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(stdout, map[string]any{"model": m.Source, "batched": c, "host_steal_fraction": steal.JSON()})
	}
	fmt.Fprintf(stdout, "model %s, weights %.1f MiB\n", m.Source, float64(m.Weights.Bytes())/(1<<20))
	if fa {
		fmt.Fprintf(stdout, "(llama.cpp runs -fa: its quantized %s V cache needs flash attention)\n", ct)
	}
	benchmark.WriteBatchedComparison(stdout, c)
	fmt.Fprintf(stdout, "llama.cpp ran: %s %s\n", f.batched.path, strings.Join(c.Rows[0].LlamaArguments, " "))
	benchmark.WriteSteal(stdout, steal)
	return nil
}
