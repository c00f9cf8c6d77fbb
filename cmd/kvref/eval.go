package main

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/kvref/kvref/eval"
	"github.com/kvref/kvref/internal/term"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

func init() {
	register(command{"eval", "measure what each KV cache type costs in accuracy (perplexity, KL, top-1)", evalCmd})
}

func evalCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr, "usage: kvref eval [-m MODEL] [--file TEXT] [--cache-dtype T,...] [-ctk K -ctv V] [-c N] [--json]")
	var mf modelFlags
	mf.register(fs, "")
	file := fs.String("file", "", "text to evaluate on (default: a built-in TinyStories-style sample)")
	dtypes := fs.String("cache-dtype", "all", "comma-separated cache types to compare with f32, or all: "+typeNames())
	var pairK, pairV string
	registerKVPair(fs, &pairK, &pairV, "also compare one cache with keys of this type and values of --cache-type-v's (default f32)", "value type of the --cache-type-k cache (default f32)")
	var ctx, threads int
	registerContext(fs, &ctx, 0, "window length in tokens (0: the model's context, at most 4096)")
	registerThreads(fs, &threads, "")
	asJSON := fs.Bool("json", false, "print one JSON object")
	perToken := fs.Bool("per-token", false, "print the log-probability of every token of the text (one window, the cache of -ctk/-ctv, f32 by default), tokenized as kvref serve tokenizes a text prompt: what serve's echo or prompt_logprobs return for it, bit for bit")
	if err := parse(fs, args); err != nil {
		return err
	}
	list := quant.CacheTypes()
	if *dtypes != "all" {
		var err error
		if list, err = parseCacheList("--cache-dtype", *dtypes); err != nil {
			return err
		}
	}
	caches := eval.Uniform(list)
	if pairK != "" || pairV != "" {
		k, v, err := cacheTypes("f32", pairK, pairV)
		if err != nil {
			return err
		}
		caches = append(caches, eval.Cache{K: k, V: v})
	}
	types := eval.Compared(caches)
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
	if *perToken {
		return printPerToken(stdout, m.Source, text, source, caches[len(caches)-1], pairK != "" || pairV != "", m, threads, *asJSON)
	}
	var usable []eval.Cache
	for _, c := range types {
		if err := c.Validate(m.Config.KVHeads, m.Config.HeadDim); err != nil {
			fmt.Fprintf(stderr, "kvref eval: skipping %s: %v\n", c, err)
			continue
		}
		usable = append(usable, c)
	}
	bar := term.NewBar(stderr)
	rep, err := eval.Caches(m, text, usable, ctx, threads, bar.Set)
	bar.Done()
	if err != nil {
		return err
	}
	rep.Model, rep.Text = m.Source, source
	if *asJSON {
		return printJSON(stdout, rep)
	}
	rep.WriteTable(stdout)
	return nil
}

// printPerToken prints every token's log-probability (kvref eval --per-token): a table, or
// with asJSON one object {"model", "text", "cache_type", "tokens": [...]}.
func printPerToken(w io.Writer, modelName, text, source string, c eval.Cache, pair bool, m *model.Model, threads int, asJSON bool) error {
	if !pair {
		c = eval.Cache{K: quant.F32, V: quant.F32}
	}
	toks, err := eval.PerToken(m, text, c, threads)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(w, map[string]any{"model": modelName, "text": source, "cache_type": c.String(), "tokens": toks})
	}
	sum := 0.0
	fmt.Fprintf(w, "model %s, text %s, cache %s: %d predicted tokens\n\n%6s %7s %-20s %s\n", modelName, source, c, len(toks), "pos", "id", "token", "logprob")
	for _, t := range toks {
		fmt.Fprintf(w, "%6d %7d %-20q %.17g\n", t.Pos, t.ID, t.Token, t.Logprob)
		sum += t.Logprob
	}
	fmt.Fprintf(w, "\nsum %.17g, perplexity %.6g\n", sum, math.Exp(-sum/float64(len(toks))))
	return nil
}
