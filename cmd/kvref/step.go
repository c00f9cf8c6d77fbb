package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/term"
	"github.com/kvref/kvref/tokenizer"
)

// `kvref step` decodes one token at a time and shows, after every token, where its K/V
// landed in the paged cache. This file holds the command line, the input loop and the help;
// step_state.go the stepper (the one place the session's state lives) and its commands;
// package cacheview/textview what they print.

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
terminal; the last two echo every command, so a session can be replayed. ` + "`help`" + ` at the
prompt lists them. Colours are used on a terminal only, and never when NO_COLOR is set.

flags:
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
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\ncommands:")
		fmt.Fprint(stderr, stepHelp)
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
	in, name, interactive, err := openInput(o.script)
	if err != nil {
		return err
	}
	defer in.Close()
	color := interactive && term.IsTerminal(stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	s, err := newStepper(o, stdout, stderr, color)
	if err != nil {
		return err
	}
	defer s.close()
	return s.repl().run(in, name, interactive)
}

// repl reads the session's commands (repl.go).
func (s *stepper) repl() repl {
	return repl{out: s.Out, prompt: s.prompt, exec: s.exec, paint: s.Paint}
}

// stepHelp lists the commands; `help` prints it.
const stepHelp = `  Enter, n [K]    decode the next K tokens (default 1) of the current sequence
  pick ID|"TEXT"  decode this token instead of sampling one: an id, or its text as shown
  fork            start a sibling of the current sequence that shares all its blocks, and switch to it
  switch N        make sequence N the current one
  free N          end sequence N (not the current one): its blocks lose a reference
  add TEXT        start a sequence from a new prompt, reusing cached blocks of its prefix; switch to it
  seqs            list the live sequences
  blocks          show the pool as a grid: free, in use, shared (with refcount), cached
  top K           show K alternatives for each token
  temp T          sampling temperature of every sequence (0: greedy)
  attn L[:H]|off  show each new token's attention in layer L (head H, or the mean over heads)
  help            this list
  quit            leave (so does the end of the input)
`

// exec runs one command line.
func (s *stepper) exec(line string) error {
	defer func() {
		if s.afterCommand != nil {
			s.afterCommand(line)
		}
	}()
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return sessionError(s.Next(1))
	}
	cmd, args := fields[0], fields[1:]
	want := func(n int, what string) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %s, got %q (help lists the commands)", cmd, what, strings.Join(args, " "))
		}
		return nil
	}
	switch cmd {
	case "n", "next":
		if len(args) > 1 {
			return want(1, "at most one number, the tokens to decode")
		}
		k := 1
		if len(args) == 1 {
			var err error
			if k, err = strconv.Atoi(args[0]); err != nil || k < 1 {
				return fmt.Errorf("n takes a number of tokens ≥ 1, got %q", args[0])
			}
		}
		return sessionError(s.Next(k))
	case "pick":
		id, err := s.pickArg(restOf(line))
		if err != nil {
			return err
		}
		return sessionError(s.Decode(id))
	case "fork":
		if err := want(0, "no arguments"); err != nil {
			return err
		}
		s.Fork()
		return nil
	case "switch", "free":
		if err := want(1, "a sequence number"); err != nil {
			return err
		}
		q, err := s.lookup(args[0])
		if err != nil {
			return err
		}
		if cmd == "switch" {
			s.Switch(q)
			return nil
		}
		return s.Free(q)
	case "add":
		text, err := unquote(restOf(line))
		if err != nil {
			return fmt.Errorf("add: %w", err)
		}
		return s.add(text)
	case "seqs":
		if err := want(0, "no arguments"); err != nil {
			return err
		}
		s.Sequences(s.Cur)
		return nil
	case "blocks":
		if err := want(0, "no arguments"); err != nil {
			return err
		}
		s.Blocks()
		return nil
	case "top":
		if err := want(1, "a number of alternatives"); err != nil {
			return err
		}
		k, err := strconv.Atoi(args[0])
		if vocab := s.m.Tokenizer.VocabSize(); err != nil || k < 0 || k > vocab {
			return fmt.Errorf("top takes a number from 0 to %d, got %q", vocab, args[0])
		}
		s.SetTop(k)
		return nil
	case "temp":
		if err := want(1, "a temperature"); err != nil {
			return err
		}
		t, err := strconv.ParseFloat(args[0], 64)
		if err != nil || t < 0 || math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("temp takes a number ≥ 0 (0: greedy), got %q", args[0])
		}
		s.SetTemperature(t)
		return nil
	case "attn":
		if err := want(1, "LAYER, LAYER:HEAD or off"); err != nil {
			return err
		}
		a, err := parseAttention(args[0], s.m.Config)
		if err != nil {
			return fmt.Errorf("attn: %w", err)
		}
		s.SetAttention(a)
		return nil
	case "help", "?":
		s.Say("commands (Enter = n 1):\n%s", strings.TrimRight(stepHelp, "\n"))
		return nil
	case "quit", "q", "exit":
		return errQuit
	}
	return fmt.Errorf("unknown command %q (help lists the commands)", cmd)
}

// restOf returns a command line without its first word, spaces trimmed.
func restOf(line string) string {
	line = strings.TrimSpace(line)
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		return strings.TrimSpace(line[i:])
	}
	return ""
}

// unquote removes Go-style double quotes around text, if it has them, so that a text can
// begin or end with spaces (add " upon a time", pick " big"); other text is returned as it is.
func unquote(text string) (string, error) {
	if len(text) < 2 || !strings.HasPrefix(text, `"`) || !strings.HasSuffix(text, `"`) {
		return text, nil
	}
	unq, err := strconv.Unquote(text)
	if err != nil {
		return "", fmt.Errorf("%s is not a valid quoted string: %v", text, err)
	}
	return unq, nil
}

// pickArg reads the argument of pick: a token id, or a token's text in double quotes as
// the display shows it (" big", "\n"), or a vocabulary entry such as </s>.
func (s *stepper) pickArg(arg string) (int, error) {
	tok := s.m.Tokenizer
	vocab := tok.VocabSize()
	usage := fmt.Errorf("pick takes a token id from 0 to %d or a token's text in quotes, as shown (pick 410, pick \" big\"), got %q", vocab-1, arg)
	if arg == "" {
		return 0, usage
	}
	if id, err := strconv.Atoi(arg); err == nil {
		if id < 0 || id >= vocab {
			return 0, usage
		}
		return id, nil
	}
	text, err := unquote(arg)
	if err != nil {
		return 0, fmt.Errorf("pick: %w", err)
	}
	if id, ok := tokenizer.Lookup(tok, text); ok {
		return id, nil
	}
	return 0, fmt.Errorf("pick: no token is the text %q (kvref tokenize -m MODEL TEXT shows how a text splits into tokens)", text)
}
