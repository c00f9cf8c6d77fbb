package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"

	"github.com/kvref/kvref/cacheview/textview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/repl"
	"github.com/kvref/kvref/internal/term"
)

// `kvref step` decodes one token at a time and shows, after every token, where its K/V
// landed in the paged cache. This file holds the command line and the input loop;
// step_state.go the terminal session (the one place its state lives) and the hints that
// name kvref's flags; package cacheview/textview the commands (Console.Exec) and what they
// print.

func init() {
	register(command{"step", "decode one token at a time and watch the KV cache (blocks, slots, sharing, copy-on-write)", stepCmd})
}

// stepOptions are the flags of `kvref step`.
type stepOptions struct {
	modelFlags
	engineFlags
	prompt, script, attn string
	top                  int
	check                bool
	sampling             engine.Sampling
	web                  bool   // --web: the browser front end (step_web.go)
	host                 string // --host, with --web
	port                 int    // --port, with --web
}

const stepUsage = `usage: kvref step [-m MODEL] -p PROMPT [--block-size B] [--cache-blocks N] [--cache-dtype T] [-c N]
                  [--temp T] [--top-k K] [--seed S] [--top N] [--attn LAYER[:HEAD]] [--check] [--script FILE]
       kvref step --web [--port P] [--host H] [-p PROMPT] [the same model, cache and sampling flags]

Decodes one token at a time through the paged KV cache and shows where everything lives.
After the prompt's prefill it lists the prompt's tokens with their positions and the block
and slot holding each one's K/V, then waits for commands. Each Enter decodes one token:
it samples from the logits it holds, then computes the chosen token — which is when its
K/V is written — and shows the token and its probability, the most likely alternatives,
the block and slot its K/V went to (a new block, or a copy of a shared one), the block
table and the cache totals.

With --web the same session runs in the browser instead: kvref serves a page (by default at
http://127.0.0.1:8090/) that draws the pool, the block tables, the formula, the event log, the
last step's top-k and an attention heatmap, with buttons for every command and the
tutorial's walk.

Commands come from the terminal, from --script FILE, or from stdin when it is not a
terminal; the last two echo every command, so a session can be replayed. On a terminal
a line can be edited and Up/Down recall earlier commands. ` + "`help`" + ` at the prompt lists them. Colours are used on a terminal only, and never when NO_COLOR is set.
`

// parseStepFlags reads the command line of `kvref step`.
func parseStepFlags(args []string, stderr io.Writer) (stepOptions, error) {
	var o stepOptions
	fs := newFlags("step", stderr)
	o.modelFlags.register(fs, "")
	o.engineFlags.register(fs, "enough for one full-context sequence")
	fs.StringVar(&o.prompt, "p", "", "prompt text (BOS is added when the model's tokenizer adds one)")
	registerSampling(fs, &o.sampling, "sequence N samples with a seed derived from it and N")
	fs.IntVar(&o.top, "top", 5, "alternatives shown for each token")
	fs.StringVar(&o.attn, "attn", "", "show the new token's attention in LAYER (HEAD, or the mean over heads), e.g. 2 or 2:5")
	fs.StringVar(&o.script, "script", "", "run the commands of FILE, one per line, echoing them (a # line is a comment, a blank line is Enter)")
	fs.BoolVar(&o.check, "check", false, "recompute every step with the cache-free reference and require bit-identical logits before showing it")
	fs.BoolVar(&o.web, "web", false, "step in the browser: serve the cache view with stepping controls on --host:--port")
	fs.StringVar(&o.host, "host", "127.0.0.1", "with --web: address to listen on")
	fs.IntVar(&o.port, "port", 8090, "with --web: port to listen on (0: any free port; the URL is printed on stderr)")
	fs.Usage = func() {
		fmt.Fprint(stderr, stepUsage)
		printFlags(fs, stderr)
		fmt.Fprintln(stderr, "\ncommands:")
		fmt.Fprint(stderr, textview.Help)
	}
	if err := parseFlagsOnly(fs, args, "quote the prompt: -p \"...\""); err != nil {
		return o, err
	}
	if _, err := o.engineFlags.config(1); err != nil {
		return o, err
	}
	switch {
	case o.top < 0:
		return o, fmt.Errorf("--top must be ≥ 0, got %d", o.top)
	case o.sampling.Temperature < 0 || math.IsNaN(o.sampling.Temperature) || math.IsInf(o.sampling.Temperature, 0):
		return o, fmt.Errorf("--temp must be a number ≥ 0, got %v", o.sampling.Temperature)
	case o.port < 0 || o.port > 65535:
		return o, fmt.Errorf("--port must be between 0 and 65535, got %d", o.port)
	case o.web && o.script != "":
		return o, fmt.Errorf("--web and --script do not go together: a script runs in the terminal")
	}
	return o, nil
}

func stepCmd(args []string, stdout, stderr io.Writer) error {
	o, err := parseStepFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.web {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return stepWeb(ctx, o, stderr, nil)
	}
	in, name, interactive, err := repl.OpenInput(o.script)
	if err != nil {
		return err
	}
	defer in.Close()
	color := interactive && term.IsTerminal(stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	s, err := newStepTerm(o, stdout, stderr, color)
	if err != nil {
		return err
	}
	defer s.close()
	return s.repl().Run(in, name, interactive)
}

// repl reads the session's commands (internal/repl).
func (s *stepTerm) repl() repl.REPL {
	return repl.REPL{Out: s.Out, Prompt: s.prompt, Exec: s.exec, Paint: s.Paint}
}

// exec runs one command line (textview.Console.Exec) and adds the hint that fits kvref step.
func (s *stepTerm) exec(line string) error {
	if s.afterCommand != nil {
		defer s.afterCommand(line)
	}
	return sessionError(s.Exec(line))
}
