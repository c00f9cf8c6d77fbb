package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/kvref/kvref/internal/loadgen"
)

func init() {
	register(command{"loadgen", "send a shared-system-prompt serving workload to an OpenAI-compatible server and report vLLM's serving metrics", loadgenCmd})
}

func loadgenCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("loadgen", stderr, "usage: kvref loadgen [flags] URL  |  kvref loadgen --cold-start [flags] URL -- SERVER COMMAND...",
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
	jsonFile := fs.String("json-file", "", "also write the JSON object to this file")
	coldStart := fs.Bool("cold-start", false, "instead: start the server command given after -- (listening at URL), and time its process start to /health 200 and to the first token of one --shared-token prompt; --rounds times")
	rounds := fs.Int("rounds", 1, "--cold-start: starts to time, one after another")
	if err := parse(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) > 0 {
		c.URL, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 && rest[0] != "--" { // flags after the URL
		if err := parse(fs, rest); err != nil {
			return err
		}
		rest = fs.Args()
	} else if len(rest) > 0 {
		rest = rest[1:] // the server command after --
	}
	if c.URL == "" || (len(rest) > 0 && !*coldStart) {
		fs.Usage()
		return fmt.Errorf("give the server's URL, such as http://127.0.0.1:8080 (and a server command after -- only with --cold-start)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *coldStart {
		return loadgenColdStart(ctx, c, rest, *rounds, *asJSON, stdout, stderr)
	}
	fmt.Fprintf(stderr, "kvref loadgen: %d clients, prompts of %d + %d tokens, %d generated each...\n", c.Concurrency, c.SharedTokens, c.UniqueTokens, c.OutputTokens)
	r, err := loadgen.Run(ctx, c)
	if err != nil && r.Completed == 0 {
		return err
	}
	if *jsonFile != "" {
		var b strings.Builder
		if perr := printJSON(&b, r); perr != nil {
			return perr
		}
		if werr := os.WriteFile(*jsonFile, []byte(b.String()), 0o644); werr != nil {
			return fmt.Errorf("--json-file: %w", werr)
		}
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

// loadgenColdStart runs and prints --cold-start.
func loadgenColdStart(ctx context.Context, c loadgen.Config, argv []string, rounds int, asJSON bool, stdout, stderr io.Writer) error {
	if len(argv) == 0 {
		return fmt.Errorf("--cold-start: give the server command after --, such as -- kvref serve -m MODEL --port 8080")
	}
	if rounds < 1 {
		return fmt.Errorf("--rounds %d: give at least 1", rounds)
	}
	runs, err := loadgen.MeasureColdStarts(ctx, c, argv, rounds, stderr)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(stdout, map[string]any{"cold_starts": runs})
	}
	loadgen.WriteColdStarts(stdout, argv, runs)
	return nil
}
