package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kvref/kvref/eval"
	"github.com/kvref/kvref/quant"
)

func init() {
	register(command{"eval", "measure what each KV cache type costs in accuracy (perplexity, KL, top-1)", evalCmd})
}

func evalCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	var mf modelFlags
	mf.register(fs)
	file := fs.String("file", "", "text to evaluate on (default: a built-in TinyStories-style sample)")
	dtypes := fs.String("cache-dtype", "all", "comma-separated cache types to compare with f32, or all: "+typeNames())
	var ctx int
	fs.IntVar(&ctx, "c", 0, "window length in tokens (0: the model's context, at most 4096); also --ctx")
	fs.IntVar(&ctx, "ctx", 0, "window length in tokens (same as -c)")
	threads := fs.Int("t", 0, "threads (0: one per core)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kvref eval [-m MODEL] [--file TEXT] [--cache-dtype T,...] [-c N] [--json]")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	types := []quant.CacheType{quant.F32}
	if *dtypes == "all" {
		types = quant.CacheTypes()
	} else {
		for _, name := range strings.Split(*dtypes, ",") {
			t, err := quant.ParseCacheType(name)
			if err != nil {
				return err
			}
			if t != quant.F32 {
				types = append(types, t)
			}
		}
	}
	text, source := eval.SampleText, "built-in sample"
	if *file != "" {
		data, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		text, source = string(data), *file
	}
	m, err := mf.open(stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	var usable []quant.CacheType
	for _, t := range types {
		if err := t.Validate(m.Config.KVHeads, m.Config.HeadDim); err != nil {
			fmt.Fprintf(stderr, "kvref eval: skipping %s: %v\n", t, err)
			continue
		}
		usable = append(usable, t)
	}
	bar := newProgress(stderr)
	rep, err := eval.CacheTypes(m, text, usable, ctx, *threads, bar.set)
	bar.done()
	if err != nil {
		return err
	}
	rep.Model, rep.Text = m.Source, source
	if *asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	fmt.Fprintf(stdout, "model %s, text %s: %d tokens in %d windows of up to %d, %d predictions\n\n",
		rep.Model, rep.Text, rep.Tokens, rep.Windows, rep.Window, rep.Predicted)
	fmt.Fprintf(stdout, "%-9s %9s %6s %11s %10s %10s %10s %8s %10s\n", "cache", "B/token", "×f32", "perplexity", "Δppl", "mean KL", "max KL", "top-1", "max|Δlogit|")
	for _, r := range rep.Results {
		fmt.Fprintf(stdout, "%-9s %9d %6.3f %11.4f %+10.4f %10.2e %10.2e %7.2f%% %10.2e\n", r.CacheType, r.BytesPerToken, r.BytesVsF32,
			r.Perplexity, r.PerplexityDiff, r.MeanKL, r.MaxKL, 100*r.Top1Agreement, r.MaxAbsLogitErr)
	}
	return nil
}
