package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kvref/kvref/eval"
	"github.com/kvref/kvref/internal/term"
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
