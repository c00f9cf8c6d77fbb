package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
)

// NodeBenchTest is one test of node-llama-cpp's bench.mjs output.
type NodeBenchTest struct {
	Test         string    `json:"test"`
	TokensPerSec float64   `json:"tokens_per_second"`
	Rates        []float64 `json:"rates"`
	BusyThreads  int       `json:"busy_threads"`  // threads alive at the end with at least 5% of the wall time in CPU time
	ThreadShares []float64 `json:"thread_shares"` // the shares of those threads above 1%, highest first
	CPUOverWall  float64   `json:"cpu_over_wall"` // the process's CPU seconds, ended threads included, over the wall seconds
}

// NodeBenchRun is bench.mjs's output: one process's run of the prompt and generation tests.
type NodeBenchRun struct {
	Engine      string          `json:"engine"`
	LlamaCpp    string          `json:"llama_cpp"`
	Threads     int             `json:"threads"`
	CacheType   string          `json:"cache_type"`
	LoadSeconds float64         `json:"load_seconds"`
	Tests       []NodeBenchTest `json:"tests"`
}

// Test returns the named test ("pp512", "tg64") of the run.
func (r *NodeBenchRun) Test(name string) (NodeBenchTest, error) {
	for _, t := range r.Tests {
		if t.Test == name {
			return t, nil
		}
	}
	return NodeBenchTest{}, fmt.Errorf("bench.mjs reported no %s test (it reported %d tests)", name, len(r.Tests))
}

// ParseNodeBench reads bench.mjs's standard output: one JSON object.
func ParseNodeBench(out []byte) (*NodeBenchRun, error) {
	var r NodeBenchRun
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		return nil, fmt.Errorf("--vs-node-llama-cpp: bench.mjs printed no JSON result (%w): %q", err, out)
	}
	return &r, nil
}

// RunNodeBench runs bench.mjs from dir once: the prompt test of prompt tokens and the
// generation test of gen tokens (0: not run), reps repetitions each.
func RunNodeBench(ctx context.Context, dir, modelPath string, prompt, gen, threads, reps int, cacheType string) (*NodeBenchRun, error) {
	args := []string{"bench.mjs", "--model", modelPath, "--prompt", strconv.Itoa(prompt), "--gen", strconv.Itoa(gen),
		"--threads", strconv.Itoa(threads), "--reps", strconv.Itoa(reps), "--cache", cacheType}
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("--vs-node-llama-cpp: node %s in %s: %w\n%s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return ParseNodeBench(stdout.Bytes())
}

// NodeCacheType maps kvref's cache type name to ggml's for bench.mjs, which compares the
// float caches, q8_0 and q4_0.
func NodeCacheType(kvref string) (string, error) {
	switch kvref {
	case "f32", "f16", "bf16", "q8_0", "q4_0":
		return kvref, nil
	default:
		return "", fmt.Errorf("--vs-node-llama-cpp compares caches of f32, f16, bf16, q8_0 or q4_0, not %s", kvref)
	}
}

// NodeCompareConfig says what CompareNode runs.
type NodeCompareConfig struct {
	Setup
	Dir       string    // tools/node-llama-cpp, with bench.mjs and its npm modules
	Model     string    // the GGUF file both engines run, absolute (m must be this file)
	CacheType string    // ggml's name of the cache type (NodeCacheType)
	Rounds    int       // interleaved rounds (each engine runs each test once per round)
	Reps      int       // repetitions averaged per round, by both engines
	Gen       int       // tokens of the generation test (tg), 0: none
	Prompt    int       // tokens of the prompt test (pp), 0: none
	Progress  io.Writer // where to say what runs (nil: nowhere)
}

// NodeComparison is the outcome of CompareNode: the rates and ratios, and per test the
// thread accounting bench.mjs gave in each round, and its model load times.
type NodeComparison struct {
	Comparison
	Usage map[string][]NodeBenchTest // by test name, one per round
	Loads []float64                  // seconds, one per round
}

// CompareNode runs node-llama-cpp's bench.mjs and kvref's Meter on the same GGUF file,
// with the same threads and cache type, in interleaved rounds whose engine order
// alternates (node first in even rounds). bench.mjs runs as a fresh process per round,
// running both tests; kvref warms up once.
func CompareNode(ctx context.Context, m *model.Model, c NodeCompareConfig) (NodeComparison, error) {
	if c.Gen <= 0 && c.Prompt <= 0 {
		return NodeComparison{}, fmt.Errorf("--vs-node-llama-cpp: nothing to compare: --tg and --prefill are both 0")
	}
	if c.Rounds < 1 || c.Reps < 1 {
		return NodeComparison{}, fmt.Errorf("benchmark: rounds %d and repetitions %d must be at least 1", c.Rounds, c.Reps)
	}
	threads := Threads(c.Threads)
	meter, err := NewMeter(m, c.Setup, max(c.Gen, c.Prompt)+1)
	if err != nil {
		return NodeComparison{}, err
	}
	defer meter.Close()
	say(c.Progress, "kvref warm-up...")
	if _, err := meter.Generation(max(1, min(c.Gen, 4))); err != nil {
		return NodeComparison{}, err
	}
	if c.Prompt > 0 {
		if _, err := meter.Prompt(c.Prompt); err != nil {
			return NodeComparison{}, err
		}
	}
	mean := func(run func() (float64, error)) func() (float64, error) { return meanOfReps(c.Reps, run) }
	var tests []compareTest
	if c.Prompt > 0 {
		tests = append(tests, compareTest{name: fmt.Sprintf("pp%d", c.Prompt), kvref: mean(func() (float64, error) { return meter.Prompt(c.Prompt) })})
	}
	if c.Gen > 0 {
		tests = append(tests, compareTest{name: fmt.Sprintf("tg%d", c.Gen), kvref: mean(func() (float64, error) { return meter.Generation(c.Gen) })})
	}
	out := NodeComparison{Comparison: Comparison{CPU: CPUName(), LlamaPath: filepath.Join(c.Dir, "bench.mjs"), Kernels: kernels.Implementation(),
		Threads: threads, CacheType: c.CacheType, Rounds: c.Rounds, Tests: make([]TestResult, len(tests))}, Usage: map[string][]NodeBenchTest{}}
	for i, t := range tests {
		out.Tests[i].Name = t.name
	}
	for round := range c.Rounds {
		nodeFirst := round%2 == 0
		var run *NodeBenchRun
		kv := make([]float64, len(tests))
		for _, node := range []bool{nodeFirst, !nodeFirst} {
			if node {
				say(c.Progress, "round %d/%d: node-llama-cpp (both tests, a fresh process)...", round+1, c.Rounds)
				if run, err = RunNodeBench(ctx, c.Dir, c.Model, c.Prompt, c.Gen, threads, c.Reps, c.CacheType); err != nil {
					return out, err
				}
				continue
			}
			for i, t := range tests {
				say(c.Progress, "round %d/%d: kvref %s...", round+1, c.Rounds, t.name)
				if kv[i], err = t.kvref(); err != nil {
					return out, err
				}
			}
		}
		out.LlamaBuild = run.Engine + ", llama.cpp " + run.LlamaCpp
		out.Loads = append(out.Loads, run.LoadSeconds)
		if err := out.addRound(run, kv); err != nil {
			return out, err
		}
	}
	for i := range out.Tests {
		tr := &out.Tests[i]
		tr.LlamaMedian, tr.KvrefMedian, tr.RatioMedian = Median(tr.Llama), Median(tr.Kvref), Median(tr.Ratios)
	}
	return out, nil
}

// addRound records one round: bench.mjs's run and kvref's rates kv, in the order of
// c.Tests (named already).
func (c *NodeComparison) addRound(run *NodeBenchRun, kv []float64) error {
	for i := range c.Tests {
		tr := &c.Tests[i]
		nt, err := run.Test(tr.Name)
		if err != nil {
			return err
		}
		c.Usage[tr.Name] = append(c.Usage[tr.Name], nt)
		tr.Llama = append(tr.Llama, nt.TokensPerSec)
		tr.Kvref = append(tr.Kvref, kv[i])
		tr.Ratios = append(tr.Ratios, kv[i]/nt.TokensPerSec)
	}
	return nil
}

// WriteText writes the comparison's table (WriteComparison), then node-llama-cpp's thread
// accounting per test and round, and its median model load time.
func (c NodeComparison) WriteText(w io.Writer) {
	WriteComparison(w, c.Comparison)
	fmt.Fprintf(w, "\nnode-llama-cpp's threads per round: how many of those alive at the end reached 5%% of the wall time in CPU time, the shares of those above 1%% (ggml's workers that ended are missing), and the process's CPU time over wall time, ended threads included (compare this with the threads asked):\n")
	for _, t := range c.Tests {
		var parts []string
		for _, u := range c.Usage[t.Name] {
			parts = append(parts, fmt.Sprintf("%d busy %v, process %.2f", u.BusyThreads, u.ThreadShares, u.CPUOverWall))
		}
		fmt.Fprintf(w, "  %-7s %s\n", t.Name, strings.Join(parts, "; "))
	}
	fmt.Fprintf(w, "node-llama-cpp load (process start excluded): median %.2f s\n", Median(c.Loads))
}
