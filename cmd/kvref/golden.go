package main

import (
	"errors"
	"fmt"
	"github.com/kvref/kvref/model/loader"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/model"
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
	model, suite, out, run, dtypes string
	pairK, pairV                   string // --cache-type-k/-ctk and --cache-type-v/-ctv
	scenarios                      multiFlag
	list, fullLogits, noCheck      bool
	blockSize, blocks, topK        int
	threads, ctx                   int
}

func goldenCmd(args []string, stdout, stderr io.Writer) error {
	var f goldenFlags
	fs := newFlags("golden", stderr)
	fs.StringVar(&f.model, "model", "", "model: a file, directory, hf:// reference or synth:SHAPE; empty: the built-in stories260K")
	fs.StringVar(&f.model, "m", "", "shorthand for --model")
	fs.StringVar(&f.suite, "suite", "default", "built-in suite: "+strings.Join(golden.Suites, ", "))
	fs.Var(&f.scenarios, "scenario", "record this scenario file instead of a built-in suite (repeatable)")
	fs.StringVar(&f.out, "out", "", "directory to write the goldens to")
	fs.BoolVar(&f.list, "list", false, "list the scenario classes and the suites' scenarios, and exit")
	fs.StringVar(&f.run, "run", "", "record only scenarios whose name matches this regular expression")
	fs.StringVar(&f.dtypes, "cache-dtypes", "", "comma-separated reference cache types to record the suite's classes at, instead of its own choice (e.g. f32,f16,q4_0): "+typeNames())
	fs.StringVar(&f.dtypes, "cache-dtype", "", "same as --cache-dtypes")
	fs.StringVar(&f.pairK, "cache-type-k", "", "record the suite's classes with keys stored as this type and values as --cache-type-v's (default f32), for a candidate such as llama-server -ctk q8_0 -ctv f16; also -ctk")
	fs.StringVar(&f.pairK, "ctk", "", "same as --cache-type-k")
	fs.StringVar(&f.pairV, "cache-type-v", "", "value type of the --cache-type-k recording (default f32); also -ctv")
	fs.StringVar(&f.pairV, "ctv", "", "same as --cache-type-v")
	fs.IntVar(&f.blockSize, "block-size", golden.DefaultParams().BlockSize, "reference-side tokens per cache block (give the candidate the same)")
	fs.IntVar(&f.blocks, "cache-blocks", golden.DefaultParams().Blocks, "reference-side blocks in the pool (give the candidate the same, so eviction and preemption happen there too)")
	fs.IntVar(&f.topK, "top-k", golden.DefaultTopK, "log-probabilities recorded per step")
	fs.BoolVar(&f.fullLogits, "full-logits", false, "also write every step's full logits as NAME.logits.safetensors")
	fs.BoolVar(&f.noCheck, "no-check", false, "skip the bitwise check of every cached step against the cache-free reference")
	fs.IntVar(&f.threads, "t", 0, "threads (0: one per core)")
	fs.IntVar(&f.ctx, "c", 0, "context length (0: the model's, at most 4096)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kvref golden --model MODEL --suite SUITE --out DIR [flags]")
		fmt.Fprintln(stderr, "       kvref golden --list [--model MODEL] [--block-size B] [--cache-blocks N]")
		fmt.Fprintln(stderr, "Records what kvref produces for cache-heavy scenarios; check another engine with kvref verify.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.list && f.model == "" {
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
	m, err := loadModel(f.model, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	info, err := modelInfo(f.model, m, f.ctx)
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
	if len(scenarios) == 0 {
		return fmt.Errorf("no scenario to record (suite %q, --run %q)", f.suite, f.run)
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "kvref golden: skipping %s: %s\n", s.Name, s.Reason)
	}
	if h := paramsHint(skipped); h != "" {
		fmt.Fprintf(stderr, "kvref golden: (%s)\n", h)
	}
	start := time.Now()
	var goldens []*golden.Golden
	version := golden.Version()
	for _, sc := range scenarios {
		t0 := time.Now()
		g, err := golden.Record(m, info, sc, golden.RecordOptions{
			TopK: f.topK, FullLogits: f.fullLogits, Check: !f.noCheck, Threads: f.threads, Context: f.ctx, Version: version,
		})
		if err != nil {
			return err
		}
		tokens := 0
		for _, r := range g.Requests {
			for _, c := range r.Choices {
				tokens += len(c.OutputIDs)
			}
		}
		reclaimed := ""
		if g.Stats.BlocksReclaimed > 0 {
			reclaimed = fmt.Sprintf(", %d blocks reclaimed", g.Stats.BlocksReclaimed)
		}
		fmt.Fprintf(stderr, "kvref golden: %-34s %2d requests %5d tokens %4d steps, %5d prefix-hit tokens, %3d evictions, %d preemptions%s (%.2f s)\n",
			sc.Name, len(g.Requests), tokens, g.Stats.Steps, g.Stats.PrefixHitTokens, g.Stats.Evictions, g.Stats.Preemptions, reclaimed, time.Since(t0).Seconds())
		goldens = append(goldens, g)
	}
	suite := f.suite
	if len(f.scenarios) > 0 {
		suite = "files"
	}
	man := &golden.Manifest{KvrefVersion: version, Model: info, Suite: suite, Params: params, TopK: f.topK}
	if err := golden.WriteDir(f.out, man, goldens); err != nil {
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
	if len(f.scenarios) > 0 {
		var out []*golden.Scenario
		for _, path := range f.scenarios {
			s, err := golden.LoadScenario(path)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, s)
		}
		return out, nil, nil
	}
	if f.pairK != "" || f.pairV != "" {
		if f.dtypes != "" {
			return nil, nil, fmt.Errorf("give --cache-dtypes (keys and values alike) or --cache-type-k/--cache-type-v, not both")
		}
		k, v, err := cacheTypes("f32", f.pairK, f.pairV)
		if err != nil {
			return nil, nil, err
		}
		return scenariosAtPair(k, v, f.suite, p)
	}
	if f.dtypes == "" {
		return golden.Suite(f.suite, p)
	}
	var types []quant.CacheType
	for _, name := range strings.Split(f.dtypes, ",") {
		t, err := quant.ParseCacheType(name)
		if err != nil {
			return nil, nil, fmt.Errorf("--cache-dtypes: %w", err)
		}
		types = append(types, t)
	}
	return golden.SuiteAt(f.suite, p, types)
}

// scenariosAtPair returns the suite's classes with keys stored as k and values as v.
func scenariosAtPair(k, v quant.CacheType, suite string, p golden.Params) ([]*golden.Scenario, []golden.Skipped, error) {
	for _, t := range []quant.CacheType{k, v} {
		if p.Supports != nil && !p.Supports(t) {
			return nil, nil, fmt.Errorf("the model's K/V rows cannot be stored as %s (the block types need kv_heads·head_dim to be a multiple of 32)", t)
		}
	}
	f32, skipped, err := golden.SuiteAt(suite, p, []quant.CacheType{quant.F32})
	if err != nil {
		return nil, nil, err
	}
	var out []*golden.Scenario
	for _, s := range f32 {
		out = append(out, golden.AtCacheTypes(s, k, v))
	}
	return out, skipped, nil
}

// modelInfo identifies the model for a golden: its path, SHA-256 and vocabulary.
func modelInfo(path string, m *model.Model, ctx int) (golden.ModelInfo, error) {
	if ctx <= 0 {
		ctx = min(m.Config.Context, engine.DefaultContext)
	}
	info := golden.ModelInfo{Path: path, Source: m.Source, Vocab: m.Config.Vocab, Context: ctx, BOS: m.Tokenizer.BOS(), EOS: m.Tokenizer.EOS(),
		SlidingWindow: m.Config.SlidingWindow}
	if loader.KindOf(path) != loader.File {
		b, err := loader.InMemoryGGUF(path)
		if err != nil {
			return info, err
		}
		info.Path, info.SHA256 = m.Source, golden.BytesSHA256(b)
		return info, nil
	}
	file := path
	if _, err := os.Stat(m.Source); err == nil {
		file = m.Source
	}
	sum, err := golden.FileSHA256(file)
	if err != nil {
		return info, err
	}
	info.SHA256 = sum
	return info, nil
}

func shortHash(s string) string { return s[:min(12, len(s))] }

// listScenarios prints the classes and the suites' scenarios for the parameters.
func listScenarios(w io.Writer, p golden.Params) error {
	window := ""
	if p.Window > 0 {
		window = fmt.Sprintf(", sliding window %d", p.Window)
	}
	fmt.Fprintf(w, "Scenario classes (block size %d, %d blocks = %d tokens, context %d%s):\n\n", p.BlockSize, p.Blocks, p.BlockSize*p.Blocks, p.Context, window)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range golden.Classes() {
		suite := ""
		if c.Sliding {
			suite = " [sliding]"
		}
		fmt.Fprintf(tw, "  %s%s\t%s\n", c.Name, suite, c.Summary)
	}
	tw.Flush()
	for _, name := range golden.Suites {
		scs, skipped, err := golden.Suite(name, p)
		if errors.Is(err, golden.ErrNoWindow) {
			fmt.Fprintf(w, "\nSuite %s: only for models with sliding-window attention (kvref golden --list --model MODEL lists it for one)\n", name)
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\nSuite %s: %d scenarios\n", name, len(scs))
		byClass := map[string][]string{}
		var order []string
		for _, s := range scs {
			if byClass[s.Class] == nil {
				order = append(order, s.Class)
			}
			byClass[s.Class] = append(byClass[s.Class], s.Cache.TypeK)
		}
		for _, c := range order {
			if ts := byClass[c]; len(ts) == 1 {
				fmt.Fprintf(w, "  %s.%s\n", c, ts[0])
			} else {
				fmt.Fprintf(w, "  %s.{%s}\n", c, strings.Join(ts, ","))
			}
		}
		for _, s := range skipped {
			fmt.Fprintf(w, "  (skipped %s: %s)\n", s.Name, s.Reason)
		}
		if h := paramsHint(skipped); h != "" {
			fmt.Fprintf(w, "  (%s)\n", h)
		}
	}
	fmt.Fprintln(w, "\nRecord:  kvref golden --model MODEL --suite default --out DIR")
	fmt.Fprintln(w, "Verify:  kvref verify --golden DIR --target http://HOST:PORT/v1 -m MODEL   (or --candidate DUMP.jsonl)")
	return nil
}
