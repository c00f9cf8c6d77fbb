package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/logit"
	"github.com/kvref/kvref/internal/promptrun"
	"github.com/kvref/kvref/internal/runsummary"
	"github.com/kvref/kvref/tokenizer"
)

// runFlags are the flags of `kvref run`.
type runFlags struct {
	modelFlags
	engineFlags
	prompt, promptFile       string
	n, np                    int
	sampling                 engine.Sampling
	ignoreEOS, check, asJSON bool
	parallel                 bool
	chunk, batchTokens       int
}

func init() {
	register(command{"run", "generate text from a prompt through the paged KV cache", runCmd})
}

func runCmd(args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlags("run", stderr, "usage: kvref run [-m MODEL] [-p PROMPT | --prompt-file FILE] [flags]")
	f.modelFlags.register(fs, "")
	f.engineFlags.register(fs, "enough for -np full-context sequences")
	fs.StringVar(&f.prompt, "p", "", "prompt text (BOS is added when the model's tokenizer adds one; special tokens written in it, like </s> or <|im_start|>, are parsed, as llama-cli does)")
	fs.StringVar(&f.promptFile, "prompt-file", "", "file with one prompt per line, run one after another in one shared cache")
	fs.IntVar(&f.n, "n", 128, "tokens to generate per sequence (-1: until end of text or the context is full)")
	registerSampling(fs, &f.sampling, "the same seed gives the same tokens")
	fs.IntVar(&f.np, "np", 1, "parallel continuations forked from each prompt (sharing its blocks copy-on-write)")
	fs.BoolVar(&f.parallel, "parallel", false, "run all prompts of --prompt-file concurrently through the scheduler (continuous batching)")
	fs.IntVar(&f.chunk, "chunk-size", 0, "most prompt tokens of one sequence per step (chunked prefill; 0: the batch budget)")
	fs.IntVar(&f.batchTokens, "max-batch-tokens", 2048, "tokens per step, decode and prefill together")
	fs.BoolVar(&f.ignoreEOS, "ignore-eos", false, "keep generating past end-of-text tokens")
	fs.BoolVar(&f.check, "check", false, "recompute every step with the cache-free reference and require bit-identical logits; a token is printed only once its step has passed")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object per token and a final summary line")
	if err := parseFlagsOnly(fs, args, "quote the prompt: -p \"...\""); err != nil {
		return err
	}
	if f.np < 1 {
		return fmt.Errorf("-np must be ≥ 1, got %d", f.np)
	}
	if _, err := f.engineFlags.config(f.np); err != nil {
		return err // before reading the prompts
	}
	prompts := []string{f.prompt}
	if f.promptFile != "" {
		var err error
		if prompts, err = promptrun.ReadFile(f.promptFile); err != nil {
			return err
		}
	}
	eng, closeEngine, err := openEngine(&f.modelFlags, &f.engineFlags, f.np, stderr)
	if err != nil {
		return err
	}
	defer closeEngine()
	m := eng.Model()

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	multi := len(prompts) > 1 || f.np > 1
	sched := eng.NewScheduler(engine.SchedulerConfig{MaxBatchTokens: f.batchTokens, ChunkSize: f.chunk, ReuseLogits: true})
	sum := runsummary.New(eng, f.check)
	stream := !f.asJSON && !f.parallel && f.np == 1 // plain text, one sequence at a time: print as it comes
	emit := func(pi int, t engine.Token) error {
		piece := m.Tokenizer.Piece(t.ID)
		if f.asJSON {
			line := runsummary.TokenLine{Step: t.Step, Pos: t.Pos, ID: t.ID, Piece: string(piece), Top: logit.TopPairs(t.Logits, 5)}
			if multi {
				seq := pi*f.np + t.Seq
				line.Seq = &seq
			}
			b, err := json.Marshal(line)
			if err != nil { // the engine refuses non-finite logits, so this is a kvref bug
				return fmt.Errorf("step %d (position %d): encoding the --json line: %w", t.Step, t.Pos, err)
			}
			out.Write(append(b, '\n'))
			return nil
		}
		if stream {
			out.Write(piece)
			return out.Flush()
		}
		return nil
	}
	reqs := make([]engine.Request, len(prompts))
	for pi, text := range prompts {
		reqs[pi] = engine.Request{Prompt: m.Tokenizer.EncodeSpecial(text, tokenizer.Prompt), MaxTokens: f.n, IgnoreEOS: f.ignoreEOS,
			N: f.np, Check: f.check, Sampling: f.sampling}
	}
	start := func(pi int) {
		if stream {
			if len(prompts) > 1 {
				fmt.Fprintf(out, "--- prompt %d ---\n", pi)
			}
			fmt.Fprint(out, prompts[pi])
			out.Flush()
		}
	}
	done := func(pi int, res engine.Result) error {
		sum.Add(res)
		if f.asJSON {
			return nil
		}
		if stream {
			fmt.Fprintln(out)
			return nil
		}
		for i, text := range res.Texts {
			label := fmt.Sprintf("prompt %d", pi)
			if f.np > 1 {
				label += fmt.Sprintf(", sequence %d", i)
			}
			fmt.Fprintf(out, "--- %s ---\n%s%s\n", label, prompts[pi], text)
		}
		return nil
	}
	// --parallel submits every prompt, runs them together and then prints each result;
	// otherwise each prompt runs to its end, and its text is printed, before the next.
	err = promptrun.Runner{Sched: sched, Parallel: f.parallel, Start: start, Emit: emit, Done: done,
		AfterStep: func() {
			if stepHook != nil {
				stepHook(eng, sched.Stats().Steps)
			}
		},
		AddHint: func(err error) error { return engineHint(err, "-n") },
		ErrHint: func(err error) error { return engineHint(err, "-n or -np") }}.Run(reqs)
	if err != nil {
		return err
	}
	es := sched.Stats()
	sum.Finish(eng.Pool().Stats(), es)
	if f.asJSON {
		b, err := json.Marshal(map[string]any{"summary": sum})
		if err != nil {
			return fmt.Errorf("encoding the --json summary: %w", err)
		}
		fmt.Fprintln(out, string(b))
		return nil
	}
	out.Flush()
	sum.WriteText(stderr, m.Config.ReclaimWindow())
	return nil
}

// stepHook, when set (by tests), runs after every scheduler step of kvref run with the
// engine and the number of steps run so far: the place to corrupt a cache entry mid-run.
var stepHook func(eng *engine.Engine, steps int)
