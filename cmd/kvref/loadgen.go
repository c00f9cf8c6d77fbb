package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/kvref/kvref/internal/loadgen"
)

func init() {
	register(command{"loadgen", "send a shared-system-prompt serving workload to an OpenAI-compatible server and report vLLM's serving metrics", loadgenCmd})
}

func loadgenCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("loadgen", stderr, "usage: kvref loadgen [flags] URL",
		"",
		"Sends C concurrent streamed /v1/completions requests to the server at URL (kvref serve,",
		"llama.cpp's llama-server, vLLM): each prompt is S token ids every request shares, then U",
		"ids of its own; each asks for G tokens with ignore_eos. Reports what vLLM's",
		"benchmark_serving.py reports, under its names: request and output-token throughput,",
		"TTFT, TPOT and ITL (mean, median, p99).")
	var c loadgen.Config
	fs.IntVar(&c.Concurrency, "concurrency", 16, "clients sending at once, C")
	fs.IntVar(&c.Requests, "requests", 0, "requests in all (0: one per client)")
	fs.IntVar(&c.SharedTokens, "shared", 1024, "token ids every prompt starts with, S (the system prompt)")
	fs.IntVar(&c.UniqueTokens, "unique", 16, "token ids of each prompt's own, after the shared ones")
	fs.IntVar(&c.OutputTokens, "gen", 64, "tokens generated per request, G (max_tokens, ignore_eos)")
	fs.IntVar(&c.Vocab, "vocab", 256, "the prompts' token ids are drawn from [3, vocab)")
	fs.Uint64Var(&c.Seed, "seed", 1, "the prompts' seed")
	fs.StringVar(&c.Model, "model", "", "the requests' model field (empty: left out)")
	asJSON := fs.Bool("json", false, "print one JSON object (benchmark_serving.py's result names)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 { // flags after the URL
		url := fs.Arg(0)
		if err := parse(fs, fs.Args()[1:]); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			c.URL = url
		}
	} else if fs.NArg() == 1 {
		c.URL = fs.Arg(0)
	}
	if c.URL == "" || fs.NArg() > 1 {
		fs.Usage()
		return fmt.Errorf("give the server's URL, such as http://127.0.0.1:8080")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stderr, "kvref loadgen: %d clients, prompts of %d + %d tokens, %d generated each...\n", c.Concurrency, c.SharedTokens, c.UniqueTokens, c.OutputTokens)
	r, err := loadgen.Run(ctx, c)
	if err != nil && r.Completed == 0 {
		return err
	}
	if *asJSON {
		if perr := printJSON(stdout, r); perr != nil {
			return perr
		}
	} else {
		r.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if r.Failed > 0 {
		return fmt.Errorf("loadgen: %d of %d requests failed", r.Failed, r.Failed+r.Completed)
	}
	return nil
}
