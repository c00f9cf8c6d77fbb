package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kvref/kvref/internal/benchmark"
	"github.com/kvref/kvref/internal/nodellama"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// registerVsNode registers kvref bench's --vs-node-llama-cpp flag and returns its value.
func registerVsNode(fs *flag.FlagSet) *string {
	return fs.String("vs-node-llama-cpp", "", "run node-llama-cpp 3.22.1 (llama.cpp 0.5.0) from this directory (tools/node-llama-cpp, its bench.mjs, npm modules installed) on the same GGUF file (-m), interleaved with kvref, and print the ratios and the threads llama.cpp kept busy (uses --tg, --prefill, --rounds, --reps; f16 cache unless --cache-dtype)")
}

// benchVsNode runs and prints --vs-node-llama-cpp: bench.mjs and kvref's llama-bench-style
// meter on the same GGUF file, with the same threads and cache type, in interleaved rounds
// whose engine order alternates.
func benchVsNode(m *model.Model, fs *flag.FlagSet, f benchFlags, dir string, setup benchmark.Setup, steal *benchmark.StealMeter, stdout, stderr io.Writer) error {
	if err := benchmark.CheckGGUF(f.ref); err != nil {
		return fmt.Errorf("--vs-node-llama-cpp: %w", err)
	}
	if err := nodellama.Check(dir); err != nil {
		return fmt.Errorf("--vs-node-llama-cpp: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench.mjs")); err != nil {
		return fmt.Errorf("--vs-node-llama-cpp: %s has no bench.mjs (give tools/node-llama-cpp): %w", dir, err)
	}
	if !flagSet(fs, "cache-dtype") && f.k == "" && f.v == "" {
		setup.KType, setup.VType = quant.F16, quant.F16 // llama.cpp's default cache
	}
	if setup.KType != setup.VType {
		return fmt.Errorf("--vs-node-llama-cpp compares one cache type for keys and values, not %s keys and %s values: give --cache-dtype T alone", setup.KType, setup.VType)
	}
	ct, err := benchmark.NodeCacheType(setup.KType.String())
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(f.ref)
	if err != nil {
		return err
	}
	reps := max(f.reps, 1)
	c, err := benchmark.CompareNode(context.Background(), m, benchmark.NodeCompareConfig{Setup: setup, Dir: dir, Model: abs,
		CacheType: ct, Rounds: cmp.Or(f.rounds, 3), Reps: reps, Gen: f.gen, Prompt: f.prefill, Progress: stderr})
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(stdout, map[string]any{"model": m.Source, "comparison": c.Comparison, "node_llama_cpp_threads": c.Usage,
			"node_llama_cpp_load_seconds": c.Loads, "host_steal_fraction": steal.JSON()})
	}
	fmt.Fprintf(stdout, "model %s, cache %s, %d threads asked of both, %d interleaved rounds of %d repetitions\n", m.Source, ct, c.Threads, c.Rounds, reps)
	c.WriteText(stdout)
	benchmark.WriteSteal(stdout, steal)
	return nil
}
