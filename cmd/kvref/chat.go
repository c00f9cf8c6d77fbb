package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

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

// chatCommands is the help of the REPL.
const chatCommands = `  /reset       start a new conversation (the system message stays; cached blocks stay evictable)
  /stats       the cache reuse of the conversation so far, and the pool
  /save FILE   write the conversation as a JSON array of {"role", "content"} messages
  /quit        end the chat (so does the end of input)`

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
	r := &chatREPL{s: s, out: bufio.NewWriter(stdout), stderr: stderr}
	defer r.out.Flush()
	in, name, interactive, err := repl.OpenInput(*script)
	if err != nil {
		return err
	}
	defer in.Close()
	return repl.REPL{Out: r.out, Prompt: func() string { return ">" }, Exec: r.exec, Flush: func() { r.out.Flush() }}.Run(in, name, interactive)
}

// chatREPL runs the chat's lines and prints the replies.
type chatREPL struct {
	s      *chat.Session
	out    *bufio.Writer
	stderr io.Writer
}

// exec runs one line: a command or a message.
func (r *chatREPL) exec(line string) error {
	cmd, arg, _ := strings.Cut(line, " ")
	switch {
	case line == "":
		return nil
	case cmd == "/quit" || cmd == "/exit":
		return repl.ErrQuit
	case cmd == "/help":
		fmt.Fprintln(r.out, chatCommands)
		return nil
	case cmd == "/reset":
		r.s.Reset()
		fmt.Fprintln(r.out, "(a new conversation)")
		return nil
	case cmd == "/stats":
		r.printStats()
		return nil
	case cmd == "/save":
		return r.save(strings.TrimSpace(arg))
	case strings.HasPrefix(cmd, "/"):
		return fmt.Errorf("unknown command %s (/help lists them; a message cannot start with /)", cmd)
	}
	t, err := r.s.Send(line, func(text string) error {
		_, err := r.out.WriteString(text)
		r.out.Flush()
		return err
	})
	if err != nil {
		return engineHint(err, "-n")
	}
	if !strings.HasSuffix(t.Reply, "\n") {
		fmt.Fprintln(r.out)
	}
	fmt.Fprintf(r.out, "  [cache: %d of %d prompt tokens reused, %d computed, %d generated · %d blocks in use, %d B · %d tokens cached for the next turn]\n",
		t.ReusedTokens, t.PromptTokens, t.ComputedTokens, t.GeneratedTokens, t.Blocks, t.Bytes, t.CachedAfter)
	return nil
}

// printStats prints the totals of the conversation and the pool.
func (r *chatREPL) printStats() {
	t := r.s.Totals()
	st := r.s.Engine.Pool().Stats()
	fmt.Fprintf(r.out, "  turns     %d\n", t.Turns)
	fmt.Fprintf(r.out, "  prompts   %d tokens: %d reused from the cache (%.1f%%), %d computed\n", t.PromptTokens, t.ReusedTokens, t.ReusedPercent(), t.PromptTokens-t.ReusedTokens)
	fmt.Fprintf(r.out, "  replies   %d tokens generated\n", t.GeneratedTokens)
	fmt.Fprintf(r.out, "  pool      %d blocks of %d slots, %d B per token: %d used, %d cached, %d free\n",
		st.BlocksTotal, st.BlockSize, st.BytesPerToken, st.BlocksUsed, st.BlocksCached, st.BlocksFree)
}

// save writes the transcript.
func (r *chatREPL) save(path string) error {
	if path == "" {
		return fmt.Errorf("/save needs a FILE")
	}
	if err := r.s.SaveFile(path); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "(saved %d messages to %s)\n", len(r.s.Messages()), path)
	return nil
}
