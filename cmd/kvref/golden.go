package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/quant"
)

func init() {
	register(command{"golden", "record cache-correctness goldens for other engines (scenario suites, top-k log-probabilities)", goldenCmd})
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

// String returns the values joined by commas.
func (m *multiFlag) String() string { return strings.Join(*m, ",") }

// Set adds a value.
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// goldenFlags are the flags of `kvref golden`.
type goldenFlags struct {
	modelFlags
	suite, out, run, dtypes   string
	pairK, pairV              string // --cache-type-k/-ctk and --cache-type-v/-ctv
	scenarios                 multiFlag
	list, fullLogits, noCheck bool
	blockSize, blocks, topK   int
	threads, ctx              int
}

func goldenCmd(args []string, stdout, stderr io.Writer) error {
	var f goldenFlags
	fs := newFlags("golden", stderr,
		"usage: kvref golden --model MODEL --suite SUITE --out DIR [flags]",
		"       kvref golden --list [--model MODEL] [--block-size B] [--cache-blocks N]",
		"Records what kvref produces for cache-heavy scenarios; check another engine with kvref verify.")
	f.modelFlags.register(fs, "")
	alias(fs, "model", "m")
	fs.StringVar(&f.suite, "suite", "default", "built-in suite: "+strings.Join(golden.Suites, ", "))
	fs.Var(&f.scenarios, "scenario", "record this scenario file instead of a built-in suite (repeatable)")
	fs.StringVar(&f.out, "out", "", "directory to write the goldens to")
	fs.BoolVar(&f.list, "list", false, "list the scenario classes and the suites' scenarios, and exit")
	fs.StringVar(&f.run, "run", "", "record only scenarios whose name matches this regular expression")
	fs.StringVar(&f.dtypes, "cache-dtypes", "", "comma-separated reference cache types to record the suite's classes at, instead of its own choice (e.g. f32,f16,q4_0): "+typeNames())
	alias(fs, "cache-dtype", "cache-dtypes")
	registerKVPair(fs, &f.pairK, &f.pairV, "record the suite's classes with keys stored as this type and values as --cache-type-v's (default f32), for a candidate such as llama-server -ctk q8_0 -ctv f16", "value type of the --cache-type-k recording (default f32)")
	fs.IntVar(&f.blockSize, "block-size", golden.DefaultParams().BlockSize, "reference-side tokens per cache block (give the candidate the same)")
	fs.IntVar(&f.blocks, "cache-blocks", golden.DefaultParams().Blocks, "reference-side blocks in the pool (give the candidate the same, so eviction and preemption happen there too)")
	fs.IntVar(&f.topK, "top-k", golden.DefaultTopK, "log-probabilities recorded per step")
	fs.BoolVar(&f.fullLogits, "full-logits", false, "also write every step's full logits as NAME.logits.safetensors")
	fs.BoolVar(&f.noCheck, "no-check", false, "skip the bitwise check of every cached step against the cache-free reference")
	registerThreads(fs, &f.threads, "")
	registerContext(fs, &f.ctx, 0, contextHelp)
	if err := parseFlagsOnly(fs, args, ""); err != nil {
		return err
	}
	if f.list && f.ref == "" {
		return listScenarios(stdout, golden.Params{BlockSize: f.blockSize, Blocks: f.blocks, Context: golden.DefaultParams().Context})
	}
	if !f.list && f.out == "" {
		return fmt.Errorf("--out DIR is required (where the goldens go); see kvref golden -h")
	}
	var filter *regexp.Regexp
	if f.run != "" {
		var err error
		if filter, err = regexp.Compile(f.run); err != nil {
			return fmt.Errorf("--run: %w", err)
		}
	}
	m, err := f.modelFlags.open(stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	info, err := golden.Identify(f.ref, m, f.ctx)
	if err != nil {
		return err
	}
	params := golden.ParamsFor(m, f.blockSize, f.blocks, info.Context)
	if f.list {
		return listScenarios(stdout, params)
	}
	scenarios, skipped, err := selectScenarios(f, params)
	if err != nil {
		return goldenHint(err)
	}
	if filter != nil {
		scenarios = slices.DeleteFunc(scenarios, func(s *golden.Scenario) bool { return !filter.MatchString(s.Name) })
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "kvref golden: skipping %s: %s\n", s.Name, s.Reason)
	}
	if h := paramsHint(skipped); h != "" {
		fmt.Fprintf(stderr, "kvref golden: (%s)\n", h)
	}
	if len(scenarios) == 0 { // the reasons above say why
		return fmt.Errorf("no scenario to record (suite %q, --run %q; %d skipped)", f.suite, f.run, len(skipped))
	}
	suite := f.suite
	if len(f.scenarios) > 0 {
		suite = "files"
	}
	start := time.Now()
	man := &golden.Manifest{Model: info, Suite: suite, Params: params}
	opt := golden.RecordOptions{TopK: f.topK, FullLogits: f.fullLogits, Check: !f.noCheck, Threads: f.threads, Context: f.ctx}
	goldens, err := golden.RecordDir(f.out, m, man, scenarios, opt, func(g *golden.Golden, took time.Duration) {
		fmt.Fprintf(stderr, "kvref golden: %s (%.2f s)\n", g.Summary(), took.Seconds())
	})
	if err != nil {
		return err
	}
	check := "every cached step checked bit for bit against the cache-free reference"
	if f.noCheck {
		check = "not checked against the cache-free reference (--no-check)"
	}
	fmt.Fprintf(stdout, "recorded %d scenarios into %s in %.1f s (model sha256 %s, block size %d, %d blocks; %s)\n",
		len(goldens), f.out, time.Since(start).Seconds(), shortHash(info.SHA256), f.blockSize, f.blocks, check)
	return nil
}

// selectScenarios returns the scenario files given with --scenario, or the suite's
// scenarios: at its own choice of types, at --cache-dtypes, or at the key and value types
// of --cache-type-k and --cache-type-v.
func selectScenarios(f goldenFlags, p golden.Params) ([]*golden.Scenario, []golden.Skipped, error) {
	sel := golden.Selection{Files: f.scenarios, Suite: f.suite}
	switch {
	case len(f.scenarios) > 0:
	case f.pairK != "" || f.pairV != "":
		if f.dtypes != "" {
			return nil, nil, fmt.Errorf("give --cache-dtypes (keys and values alike) or --cache-type-k/--cache-type-v, not both")
		}
		k, v, err := cacheTypes("f32", f.pairK, f.pairV)
		if err != nil {
			return nil, nil, err
		}
		sel.Pair = &[2]quant.CacheType{k, v}
	case f.dtypes != "":
		var err error
		if sel.Types, err = parseCacheList("--cache-dtypes", f.dtypes); err != nil {
			return nil, nil, err
		}
	}
	return golden.Select(sel, p)
}

func shortHash(s string) string { return s[:min(12, len(s))] }

// listScenarios prints the classes and the suites' scenarios for the parameters, and how
// to record and verify.
func listScenarios(w io.Writer, p golden.Params) error {
	if err := golden.WriteList(w, p, paramsHint); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nRecord:  kvref golden --model MODEL --suite default --out DIR")
	fmt.Fprintln(w, "Verify:  kvref verify --golden DIR --target http://HOST:PORT/v1 -m MODEL   (or --candidate DUMP.jsonl)")
	return nil
}
