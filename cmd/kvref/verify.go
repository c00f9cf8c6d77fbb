package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"time"

	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/loader"
	"github.com/kvref/kvref/quant"
)

func init() {
	register(command{"verify", "check another engine's outputs (a dump, or a live OpenAI-compatible server) against kvref goldens", verifyCmd})
}

// verifyFlags are the flags of `kvref verify`.
type verifyFlags struct {
	modelFlags
	goldenDir, candidate, target    string
	self                            bool
	asJSON                          bool
	junit, save, run, cacheDtype    string
	cacheK, cacheV                  string
	require, cacheModel             string
	allowVacuous, control           bool
	topK, threads                   int
	modelName, flushURL             string
	timeout, stepDelay, cancelDelay time.Duration
	wait                            time.Duration
	blockSize, blocks, chunk        int
	over                            golden.Overrides
}

// floatFlag sets *dst when given.
func floatFlag(dst **float64) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		*dst = &v
		return nil
	}
}

func verifyCmd(args []string, stdout, stderr io.Writer) error {
	var f verifyFlags
	fs := newFlags("verify", stderr,
		"usage: kvref verify --golden DIR (--candidate DUMP.jsonl | --target http://HOST:PORT/v1 | --self) [-m MODEL] [flags]",
		"Exit status 0 only when every scenario passes (or is unsupported); 1 when scenarios fail; 2 when the target does not answer GET /models, or requests failed on transport and nothing failed.")
	fs.StringVar(&f.goldenDir, "golden", "", "directory of goldens written by kvref golden")
	fs.StringVar(&f.candidate, "candidate", "", "candidate dump (JSON Lines, see docs/golden.md) to check")
	fs.StringVar(&f.target, "target", "", "OpenAI-compatible server to drive and check, e.g. http://127.0.0.1:8000/v1")
	fs.BoolVar(&f.self, "self", false, "check kvref itself: replay the scenarios through kvref's engine (with --block-size, --cache-blocks, --chunk-size)")
	f.modelFlags.register(fs, "model: compare every step by teacher forcing on the candidate's own tokens (strongly recommended)")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON instead of a table")
	fs.StringVar(&f.junit, "junit", "", "also write the report as JUnit XML to this file")
	fs.StringVar(&f.save, "save", "", "write what the target (or --self) produced as a candidate dump to this file")
	fs.StringVar(&f.run, "run", "", "check only scenarios whose name matches this regular expression")
	fs.StringVar(&f.cacheDtype, "cache-dtype", "", "check only scenarios recorded with this reference cache type (the one the candidate uses): "+typeNames())
	registerKVPair(fs, &f.cacheK, &f.cacheV, "check only scenarios whose reference keys are of this type (with --cache-type-v: a K/V pair; the other defaults to f32)", "check only scenarios whose reference values are of this type")
	fs.BoolVar(&f.allowVacuous, "allow-vacuous", false, "count scenarios whose cache expectations the candidate did not meet (no hit where one was expected) as passed")
	fs.StringVar(&f.require, "require", "", "comma-separated features the candidate must support (n, token-ids, logprobs, cache-report, a request parameter such as top_k or seed, or all): a scenario whose request the candidate refused for one of them fails instead of being unsupported")
	fs.StringVar(&f.cacheModel, "cache-model", "paged", "how the candidate's prefix cache works: paged (a shared block pool: vLLM, SGLang, kvref; every expected hit must be observed) or slots (a cache per slot: llama-server; a hit served to one request of a wave may not be served to its siblings)")
	fs.BoolVar(&f.control, "control", false, "control run: the candidate's prefix cache is disabled (--target sends every request with a distinct cache_salt and cache_prompt false); cache hits fail")
	fs.IntVar(&f.topK, "top-k", 0, "compare at most this many log-probabilities per step (0: all the golden has); with --target, ask for this many")
	fs.Func("logprob-tol", "largest allowed log-probability error (default: each golden's, 0.05 for f32 goldens)", floatFlag(&f.over.Logprob))
	fs.Func("margin-tol", "a chosen token may differ from the reference argmax only where the reference margin is below this (default: each golden's)", floatFlag(&f.over.Margin))
	fs.Func("min-sample-logprob", "sampled tokens less likely than this under the reference fail (default: each golden's, -20)", floatFlag(&f.over.MinSampleLogprob))
	fs.Func("max-repeat", "this many identical tokens in a row that the reference does not produce fail as degenerate (default: each golden's, 16)", func(s string) error {
		v, err := strconv.Atoi(s)
		f.over.MaxRepeat = &v
		return err
	})
	fs.StringVar(&f.modelName, "model-name", "", "with --target: the model name to send (default: the first of GET /models)")
	fs.StringVar(&f.flushURL, "flush-url", "", "with --target: URL to POST to flush the candidate's prefix cache (before each scenario and for flush events), e.g. vLLM's http://HOST:PORT/reset_prefix_cache")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "with --target: time limit per request")
	fs.DurationVar(&f.wait, "wait", 0, "with --target: wait up to this long for the target to answer GET /models before the scenarios (0: ask once); a target that does not answer exits with status 2")
	fs.DurationVar(&f.stepDelay, "step-delay", 20*time.Millisecond, "with --target: how long a scenario's \"steps\" event pauses per step")
	fs.DurationVar(&f.cancelDelay, "cancel-delay", 250*time.Millisecond, "with --target: pause after cancelling a request, so the server notices the closed connection and frees what the request held before the scenario goes on")
	registerThreads(fs, &f.threads, "for teacher forcing and --self")
	fs.IntVar(&f.blockSize, "block-size", 0, "with --self: block size to replay with (0: the golden's)")
	fs.IntVar(&f.blocks, "cache-blocks", 0, "with --self: pool size to replay with (0: the golden's)")
	fs.IntVar(&f.chunk, "chunk-size", -1, "with --self: prefill chunk size to replay with (-1: the golden's, 0: none)")
	if err := parseFlagsOnly(fs, args, ""); err != nil {
		return err
	}
	sources := 0
	for _, on := range []bool{f.candidate != "", f.target != "", f.self} {
		if on {
			sources++
		}
	}
	if f.goldenDir == "" || sources != 1 {
		return fmt.Errorf("give --golden DIR and exactly one of --candidate FILE, --target URL, --self; see kvref verify -h")
	}
	require, err := golden.ParseRequirements(f.require)
	if err != nil {
		return fmt.Errorf("--require: %w", err)
	}
	cacheModel, err := golden.ParseCacheModel(f.cacheModel)
	if err != nil {
		return fmt.Errorf("--cache-model: %w", err)
	}
	man, goldens, err := golden.ReadDir(f.goldenDir)
	if errors.Is(err, golden.ErrNoManifest) {
		return fmt.Errorf("%w; record goldens there with `kvref golden --out %s`", err, f.goldenDir)
	}
	if err != nil {
		return err
	}
	if goldens, err = filterGoldens(goldens, f.run, f.cacheDtype, f.cacheK, f.cacheV); err != nil {
		return err
	}
	var m *model.Model
	var opt golden.VerifyOptions
	opt.Overrides, opt.TopK, opt.AllowVacuous = f.over, f.topK, f.allowVacuous
	opt.Require, opt.CacheModel = require, cacheModel
	if f.ref != "" || f.self {
		if f.ref == "" && man.Model.Source != "" {
			if loader.KindOf(man.Model.Source) == loader.File {
				return fmt.Errorf("--self needs -m MODEL (the goldens were recorded with %s)", man.Model.Path)
			}
			f.ref = man.Model.Source // the embedded or a synthetic model: open the same one
		}
		if m, err = f.modelFlags.open(stderr); err != nil {
			return err
		}
		defer m.Close()
		if err := man.CheckModel(f.goldenDir, f.ref, m); err != nil {
			return err
		}
		runner := model.NewRunner(m, f.threads)
		defer runner.Close()
		opt.Oracle, opt.Tokenizer = golden.ModelOracle{Runner: runner}, m.Tokenizer
	}

	var cand *golden.Candidate
	var source string
	switch {
	case f.candidate != "":
		source = f.candidate
		if cand, err = golden.ReadDumpFile(f.candidate); err != nil {
			return err
		}
		if f.control {
			cand.Control = true
		}
	case f.target != "":
		source = f.target
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		t := &golden.Target{BaseURL: f.target, Model: f.modelName, TopK: f.topK, Control: f.control, FlushURL: f.flushURL,
			StepDelay: f.stepDelay, CancelDelay: f.cancelDelay, Timeout: f.timeout, Log: stderr}
		if f.cancelDelay == 0 {
			t.CancelDelay = -1 // --cancel-delay 0: no pause
		}
		if err := t.Ready(ctx, f.wait); err != nil {
			return &exitCodeError{code: 2, err: err}
		}
		if cand, err = t.Run(ctx, goldens); err != nil {
			return err
		}
	default:
		source = "kvref --self"
		self := golden.SelfOptions{BlockSize: f.blockSize, Blocks: f.blocks, Chunk: f.chunk, Threads: f.threads, TopK: f.topK}
		if cand, err = golden.ReplaySelf(m, goldens, self); err != nil {
			return err
		}
	}
	if f.save != "" {
		if err := golden.WriteDumpFile(f.save, cand); err != nil {
			return err
		}
	}
	rep, err := golden.Verify(goldens, cand, opt)
	if err != nil {
		return err
	}
	rep.Golden, rep.Candidate = f.goldenDir, source
	if f.asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		return err
	}
	if f.junit != "" {
		if err := rep.WriteJUnitFile(f.junit); err != nil {
			return err
		}
	}
	err = rep.Err()
	var te *golden.TransportError
	if errors.As(err, &te) {
		return &exitCodeError{code: 2, err: err}
	}
	return err
}

// filterGoldens keeps the goldens whose name matches run and whose reference cache types are
// dtype for keys and values, or k and v (either may be empty, then f32) when one is given.
func filterGoldens(goldens []*golden.Golden, run, dtype, k, v string) ([]*golden.Golden, error) {
	var re *regexp.Regexp
	var types *[2]quant.CacheType
	if run != "" {
		var err error
		if re, err = regexp.Compile(run); err != nil {
			return nil, fmt.Errorf("--run: %w", err)
		}
	}
	if dtype != "" || k != "" || v != "" {
		if dtype != "" && (k != "" || v != "") {
			return nil, fmt.Errorf("give --cache-dtype or --cache-type-k/--cache-type-v, not both")
		}
		if dtype == "" {
			dtype = "f32"
		}
		kt, vt, err := cacheTypes(dtype, k, v)
		if err != nil {
			return nil, err
		}
		types = &[2]quant.CacheType{kt, vt}
	}
	if goldens = golden.Filter(goldens, re, types); len(goldens) == 0 {
		return nil, fmt.Errorf("no golden matches --run %q --cache-dtype %q --cache-type-k %q --cache-type-v %q", run, dtype, k, v)
	}
	return goldens, nil
}
