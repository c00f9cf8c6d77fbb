package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kvref/kvref/internal/benchmark"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/nodellama"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// registerVsNode registers kvref bench's --vs-node-llama-cpp flag and returns its value.
func registerVsNode(fs *flag.FlagSet) *string {
	return fs.String("vs-node-llama-cpp", "", "run node-llama-cpp 3.22.1 (llama.cpp 0.5.0) from this directory (tools/node-llama-cpp, its bench.mjs, npm modules installed) on the same GGUF file (-m), interleaved with kvref, and print the ratios and the threads llama.cpp kept busy (uses --tg, --prefill, --rounds, --reps; f16 cache unless --cache-dtype)")
}

// nodeBenchTest is one test of bench.mjs's output.
type nodeBenchTest struct {
	Test         string    `json:"test"`
	TokensPerSec float64   `json:"tokens_per_second"`
	Rates        []float64 `json:"rates"`
	BusyThreads  int       `json:"busy_threads"`  // threads with at least 5% of the wall time in CPU time
	ThreadShares []float64 `json:"thread_shares"` // the shares of the threads above 1%, highest first
	CPUOverWall  float64   `json:"cpu_over_wall"` // the process's CPU seconds over the wall seconds
}

// nodeBenchRun is bench.mjs's output.
type nodeBenchRun struct {
	Engine      string          `json:"engine"`
	LlamaCpp    string          `json:"llama_cpp"`
	Threads     int             `json:"threads"`
	CacheType   string          `json:"cache_type"`
	LoadSeconds float64         `json:"load_seconds"`
	Tests       []nodeBenchTest `json:"tests"`
}

// test returns the named test of the run.
func (r *nodeBenchRun) test(name string) (nodeBenchTest, error) {
	for _, t := range r.Tests {
		if t.Test == name {
			return t, nil
		}
	}
	return nodeBenchTest{}, fmt.Errorf("bench.mjs reported no %s test (it reported %d tests)", name, len(r.Tests))
}

// runNodeBench runs bench.mjs once: the prompt test of prompt tokens and the generation
// test of gen tokens (0: not run), reps repetitions each.
func runNodeBench(ctx context.Context, dir, modelPath string, prompt, gen, threads, reps int, cacheType string) (*nodeBenchRun, error) {
	args := []string{"bench.mjs", "--model", modelPath, "--prompt", strconv.Itoa(prompt), "--gen", strconv.Itoa(gen),
		"--threads", strconv.Itoa(threads), "--reps", strconv.Itoa(reps), "--cache", cacheType}
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("--vs-node-llama-cpp: node %s in %s: %w\n%s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	var r nodeBenchRun
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		return nil, fmt.Errorf("--vs-node-llama-cpp: bench.mjs printed no JSON result (%w): %q", err, stdout.String())
	}
	return &r, nil
}

// nodeCacheType maps kvref's cache type names to ggml's for bench.mjs.
func nodeCacheType(t quant.CacheType) (string, error) {
	switch s := t.String(); s {
	case "f32", "f16", "bf16", "q8_0", "q4_0":
		return s, nil
	default:
		return "", fmt.Errorf("--vs-node-llama-cpp compares caches of f32, f16, bf16, q8_0 or q4_0, not %s", s)
	}
}

// benchVsNode runs and prints --vs-node-llama-cpp: bench.mjs and kvref's llama-bench-style
// meter on the same GGUF file, with the same threads and cache type, in interleaved rounds
// whose engine order alternates.
func benchVsNode(m *model.Model, fs *flag.FlagSet, f benchFlags, dir string, setup benchmark.Setup, steal *benchmark.StealMeter, stdout, stderr io.Writer) error {
	if err := checkGGUF(f.ref); err != nil {
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
	ct, err := nodeCacheType(setup.KType)
	if err != nil {
		return err
	}
	if f.gen <= 0 && f.prefill <= 0 {
		return fmt.Errorf("--vs-node-llama-cpp: nothing to compare: --tg and --prefill are both 0")
	}
	rounds, reps, threads := cmp.Or(f.rounds, 3), max(f.reps, 1), benchmark.Threads(f.threads)
	abs, err := filepath.Abs(f.ref)
	if err != nil {
		return err
	}
	meter, err := benchmark.NewMeter(m, setup, max(f.gen, f.prefill)+1)
	if err != nil {
		return err
	}
	defer meter.Close()
	fmt.Fprintln(stderr, "kvref bench: kvref warm-up...")
	if _, err := meter.Generation(max(1, min(f.gen, 4))); err != nil {
		return err
	}
	if f.prefill > 0 {
		if _, err := meter.Prompt(f.prefill); err != nil {
			return err
		}
	}
	type test struct {
		name  string
		kvref func() (float64, error)
	}
	var tests []test
	mean := func(run func() (float64, error)) func() (float64, error) {
		return func() (float64, error) {
			sum := 0.0
			for range reps {
				v, err := run()
				if err != nil {
					return 0, err
				}
				sum += v
			}
			return sum / float64(reps), nil
		}
	}
	if f.prefill > 0 {
		tests = append(tests, test{fmt.Sprintf("pp%d", f.prefill), mean(func() (float64, error) { return meter.Prompt(f.prefill) })})
	}
	if f.gen > 0 {
		tests = append(tests, test{fmt.Sprintf("tg%d", f.gen), mean(func() (float64, error) { return meter.Generation(f.gen) })})
	}
	c := benchmark.Comparison{CPU: benchmark.CPUName(), LlamaPath: filepath.Join(dir, "bench.mjs"), Kernels: kernels.Implementation(),
		Threads: threads, CacheType: ct, Rounds: rounds, Tests: make([]benchmark.TestResult, len(tests))}
	usage := map[string][]nodeBenchTest{}
	var loads []float64
	for round := range rounds {
		nodeFirst := round%2 == 0
		var run *nodeBenchRun
		kv := make([]float64, len(tests))
		for _, node := range []bool{nodeFirst, !nodeFirst} {
			if node {
				fmt.Fprintf(stderr, "kvref bench: round %d/%d: node-llama-cpp (both tests, a fresh process)...\n", round+1, rounds)
				if run, err = runNodeBench(context.Background(), dir, abs, f.prefill, f.gen, threads, reps, ct); err != nil {
					return err
				}
				continue
			}
			for i, t := range tests {
				fmt.Fprintf(stderr, "kvref bench: round %d/%d: kvref %s...\n", round+1, rounds, t.name)
				if kv[i], err = t.kvref(); err != nil {
					return err
				}
			}
		}
		c.LlamaBuild = run.Engine + ", llama.cpp " + run.LlamaCpp
		loads = append(loads, run.LoadSeconds)
		for i, t := range tests {
			nt, err := run.test(t.name)
			if err != nil {
				return err
			}
			usage[t.name] = append(usage[t.name], nt)
			tr := &c.Tests[i]
			tr.Name = t.name
			tr.Llama = append(tr.Llama, nt.TokensPerSec)
			tr.Kvref = append(tr.Kvref, kv[i])
			tr.Ratios = append(tr.Ratios, kv[i]/nt.TokensPerSec)
		}
	}
	for i := range c.Tests {
		tr := &c.Tests[i]
		tr.LlamaMedian, tr.KvrefMedian, tr.RatioMedian = benchmark.Median(tr.Llama), benchmark.Median(tr.Kvref), benchmark.Median(tr.Ratios)
	}
	if f.asJSON {
		return printJSON(stdout, map[string]any{"model": m.Source, "comparison": c, "node_llama_cpp_threads": usage,
			"node_llama_cpp_load_seconds": loads, "host_steal_fraction": stealFraction(steal)})
	}
	fmt.Fprintf(stdout, "model %s, cache %s, %d threads asked of both, %d interleaved rounds of %d repetitions\n", m.Source, ct, threads, rounds, reps)
	benchmark.WriteComparison(stdout, c)
	fmt.Fprintf(stdout, "\nnode-llama-cpp's threads per round: how many reached 5%% of the wall time in CPU time, the shares of those above 1%%, and the process's CPU time over wall time (compare with the threads asked):\n")
	for _, t := range tests {
		var parts []string
		for _, u := range usage[t.name] {
			parts = append(parts, fmt.Sprintf("%d busy %v, process %.2f", u.BusyThreads, u.ThreadShares, u.CPUOverWall))
		}
		fmt.Fprintf(stdout, "  %-7s %s\n", t.name, strings.Join(parts, "; "))
	}
	fmt.Fprintf(stdout, "node-llama-cpp load (process start excluded): median %.2f s\n", benchmark.Median(loads))
	benchmark.WriteSteal(stdout, steal)
	return nil
}
