package benchmark

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
)

// CompareConfig says what Compare runs.
type CompareConfig struct {
	Setup
	Model      string     // the GGUF file both engines run (m must be this file)
	LlamaBench LlamaBench // the llama-bench to compare with; its Threads are Setup's
	Rounds     int        // interleaved rounds (each engine runs each test once per round)
	Reps       int        // repetitions averaged per round, by both engines (llama-bench -r)
	Gen        int        // tokens of the generation test (tg), 0: none
	Prompt     int        // tokens of the prompt test (pp), 0: none
	Progress   io.Writer  // where to say what runs (nil: nowhere)
}

// Comparison is the outcome of Compare: for each test, both engines' rates per round and
// their medians.
type Comparison struct {
	CPU        string       `json:"cpu"`           // this machine (CPUName)
	LlamaCPU   string       `json:"llama_cpu"`     // llama-bench's cpu_info
	LlamaBuild string       `json:"llama_build"`   // llama-bench's build_commit
	LlamaPath  string       `json:"llama_bench"`   // the executable that ran
	Kernels    string       `json:"kvref_kernels"` // kvref's kernel level (kernels.Implementation)
	Threads    int          `json:"threads"`
	CacheType  string       `json:"cache_type"`
	ModelType  string       `json:"model_type"` // llama-bench's description of the model
	Rounds     int          `json:"rounds"`
	Tests      []TestResult `json:"tests"`
}

// TestResult is one test (tg or pp) of a Comparison.
type TestResult struct {
	Name        string    `json:"test"`                        // "tg64", "pp512"
	Llama       []float64 `json:"llama_cpp_tokens_per_second"` // per round: llama-bench's avg_ts
	Kvref       []float64 `json:"kvref_tokens_per_second"`     // per round: the mean of Reps runs
	Ratios      []float64 `json:"ratios"`                      // per round: kvref / llama.cpp
	LlamaMedian float64   `json:"llama_cpp_median"`
	KvrefMedian float64   `json:"kvref_median"`
	RatioMedian float64   `json:"ratio_median"` // the median of the rounds' ratios
}

// Median returns the median of v (the mean of the middle two for an even count), 0 for
// none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// compareTest is one test both engines run.
type compareTest struct {
	name        string
	prompt, gen int
	kvref       func() (float64, error)
}

// Compare runs llama-bench and kvref on the same GGUF file with the same threads and cache
// type, in interleaved rounds (each round runs every test on both engines, the order of
// the two engines alternating from round to round), so that whatever else loads the
// machine weighs on both alike. m is the model opened from c.Model.
func Compare(ctx context.Context, m *model.Model, c CompareConfig) (Comparison, error) {
	if c.Rounds < 1 || c.Reps < 1 {
		return Comparison{}, fmt.Errorf("benchmark: rounds %d and repetitions %d must be at least 1", c.Rounds, c.Reps)
	}
	if c.Gen == 0 && c.Prompt == 0 {
		return Comparison{}, fmt.Errorf("benchmark: nothing to compare: no generation and no prompt test")
	}
	lb := c.LlamaBench
	// A wrong path fails here, not after kvref's warm-up.
	if _, err := exec.LookPath(lb.Path); err != nil {
		return Comparison{}, fmt.Errorf("benchmark: llama-bench %q cannot be run (%v): give the path of llama.cpp's llama-bench executable, such as ../shared/bin/llama-bench", lb.Path, err)
	}
	lb.Threads, lb.Reps = Threads(c.Threads), c.Reps
	out := Comparison{CPU: CPUName(), LlamaPath: lb.Path, Kernels: kernels.Implementation(), Threads: lb.Threads,
		CacheType: lb.CacheType, Rounds: c.Rounds}

	meter, err := NewMeter(m, c.Setup, max(c.Gen, c.Prompt)+1)
	if err != nil {
		return out, err
	}
	defer meter.Close()
	mean := func(run func() (float64, error)) func() (float64, error) { return meanOfReps(c.Reps, run) }
	var tests []compareTest
	if c.Gen > 0 {
		tests = append(tests, compareTest{fmt.Sprintf("tg%d", c.Gen), 0, c.Gen, mean(func() (float64, error) { return meter.Generation(c.Gen) })})
	}
	if c.Prompt > 0 {
		tests = append(tests, compareTest{fmt.Sprintf("pp%d", c.Prompt), c.Prompt, 0, mean(func() (float64, error) { return meter.Prompt(c.Prompt) })})
	}
	// llama-bench warms up before every test it times; kvref warms up once here (its
	// caches and page mappings stay warm within the process).
	say(c.Progress, "kvref warm-up...")
	if _, err := meter.Generation(max(1, min(c.Gen, 4))); err != nil {
		return out, err
	}
	if c.Prompt > 0 {
		if _, err := meter.Prompt(c.Prompt); err != nil {
			return out, err
		}
	}
	results := make([]TestResult, len(tests))
	for round := range c.Rounds {
		for i, t := range tests {
			llamaFirst := round%2 == 0
			var l, k float64
			for _, llama := range []bool{llamaFirst, !llamaFirst} {
				if llama {
					say(c.Progress, "round %d/%d: llama-bench %s...", round+1, c.Rounds, t.name)
					r, err := lb.Run(ctx, c.Model, t.prompt, t.gen)
					if err != nil {
						return out, err
					}
					l = r.AvgTS
					out.LlamaCPU, out.LlamaBuild, out.ModelType = r.CPUInfo, r.BuildCommit, r.ModelType
					continue
				}
				say(c.Progress, "round %d/%d: kvref %s...", round+1, c.Rounds, t.name)
				if k, err = t.kvref(); err != nil {
					return out, err
				}
			}
			tr := &results[i]
			tr.Name = t.name
			tr.Llama = append(tr.Llama, l)
			tr.Kvref = append(tr.Kvref, k)
			tr.Ratios = append(tr.Ratios, k/l)
		}
	}
	for i := range results {
		tr := &results[i]
		tr.LlamaMedian, tr.KvrefMedian, tr.RatioMedian = Median(tr.Llama), Median(tr.Kvref), Median(tr.Ratios)
	}
	out.Tests = results
	return out, nil
}

// meanOfReps returns a run that calls run reps times and gives the mean of its rates (the
// first error ends it).
func meanOfReps(reps int, run func() (float64, error)) func() (float64, error) {
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
