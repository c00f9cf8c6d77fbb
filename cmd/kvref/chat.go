package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/kvref/kvref/chat"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/repl"
)

func init() {
	register(command{"chat", "chat with a model turn by turn; its history stays in the prefix cache", chatCmd})
}

const chatUsage = `usage: kvref chat [-m MODEL] [--system TEXT] [--chat-template FILE] [--check] [sampling flags] [--script FILE]

A multi-turn conversation in the terminal, in the spirit of llama-cli -cnv. Each turn renders
the whole conversation with the model's chat template and runs it through the engine; the
prefix cache still holds the earlier turns' blocks, so after each reply a line shows how many
prompt tokens were reused from the cache and how many were computed: the history is nearly
free. A model without a chat template (like the built-in stories260K) gets ChatML, as
llama.cpp gives it.

Type a message and Enter. Commands: /reset (a new conversation), /stats (totals), /save FILE
(the transcript as JSON messages), /help, /quit; end of input (Ctrl-D) ends the chat. On a
terminal a line can be edited (arrows, Home/End, Ctrl-U/K/W) and Up/Down go through the lines
typed before. Input that is not a terminal (or --script FILE) is read line by line and echoed
after the prompt, so a transcript reads like the session.`

func chatCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("chat", stderr, chatUsage)
	var mf modelFlags
	var ef engineFlags
	var sampling engine.Sampling
	mf.register(fs, "")
	ef.register(fs, "one full context")
	topt := templateFlagSet(fs)
	system := fs.String("system", "", "the system message")
	n := fs.Int("n", -1, "most tokens per reply (-1: until the end of the turn or a full context)")
	registerSampling(fs, &sampling, "turn i samples with seed + i")
	check := fs.Bool("check", false, "recompute every step with the cache-free reference and require bit-identical logits")
	script := fs.String("script", "", "read the messages and commands from FILE, echoing them (a # line is a comment)")
	if err := parseFlagsOnly(fs, args, "the conversation comes from the terminal, stdin or --script"); err != nil {
		return err
	}
	eng, format, closeEngine, err := openChatEngine(&mf, &ef, topt, 1, stderr)
	if err != nil {
		return err
	}
	defer closeEngine()
	if format.Fallback {
		how := "its end-of-generation token"
		if len(format.StopStrings) > 0 {
			how = "the text, as it is no token of the vocabulary"
		}
		fmt.Fprintf(stderr, "kvref chat: %s has no chat template: using ChatML, as llama.cpp does; a reply ends at <|im_end|> (%s) or at the end of text (--chat-template FILE for another template)\n", eng.Model().Source, how)
	}
	s := &chat.Session{
		Engine: eng, Format: format, System: *system, MaxTokens: *n, Check: *check, Sampling: sampling,
	}
	r := &chat.Console{Session: s, Out: bufio.NewWriter(stdout), Hint: func(err error) error { return engineHint(err, "-n") }}
	defer r.Out.Flush()
	in, name, interactive, err := repl.OpenInput(*script)
	if err != nil {
		return err
	}
	defer in.Close()
	return repl.REPL{Out: r.Out, Prompt: func() string { return ">" }, Exec: r.Exec, Flush: func() { r.Out.Flush() }}.Run(in, name, interactive)
}
