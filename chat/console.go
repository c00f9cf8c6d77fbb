package chat

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/kvref/kvref/internal/repl"
)

// Commands is the help of the Console's commands.
const Commands = `  /reset       start a new conversation (the system message stays; cached blocks stay evictable)
  /stats       the cache reuse of the conversation so far, and the pool
  /save FILE   write the conversation as a JSON array of {"role", "content"} messages
  /quit        end the chat (so does the end of input)`

// Console runs a chat's lines, as kvref chat reads them: a message, sent to the Session
// with its reply and the turn's cache reuse printed to Out, or a command (/reset, /stats,
// /save FILE, /help, /quit, which returns repl.ErrQuit).
type Console struct {
	Session *Session
	Out     *bufio.Writer
	// Hint, when set, rewrites an error of Send (the engine's) to say what would avoid it.
	Hint func(error) error
}

// Exec runs one line: a command or a message.
func (r *Console) Exec(line string) error {
	cmd, arg, _ := strings.Cut(line, " ")
	switch {
	case line == "":
		return nil
	case cmd == "/quit" || cmd == "/exit":
		return repl.ErrQuit
	case cmd == "/help":
		fmt.Fprintln(r.Out, Commands)
		return nil
	case cmd == "/reset":
		r.Session.Reset()
		fmt.Fprintln(r.Out, "(a new conversation)")
		return nil
	case cmd == "/stats":
		r.printStats()
		return nil
	case cmd == "/save":
		return r.save(strings.TrimSpace(arg))
	case strings.HasPrefix(cmd, "/"):
		return fmt.Errorf("unknown command %s (/help lists them; a message cannot start with /)", cmd)
	}
	t, err := r.Session.Send(line, func(text string) error {
		_, err := r.Out.WriteString(text)
		r.Out.Flush()
		return err
	})
	if err != nil && r.Hint != nil {
		return r.Hint(err)
	}
	if err != nil {
		return err
	}
	if !strings.HasSuffix(t.Reply, "\n") {
		fmt.Fprintln(r.Out)
	}
	fmt.Fprintf(r.Out, "  [cache: %d of %d prompt tokens reused, %d computed, %d generated · %d blocks in use, %d B · %d tokens cached for the next turn]\n",
		t.ReusedTokens, t.PromptTokens, t.ComputedTokens, t.GeneratedTokens, t.Blocks, t.Bytes, t.CachedAfter)
	return nil
}

// printStats prints the totals of the conversation and the pool.
func (r *Console) printStats() {
	t := r.Session.Totals()
	st := r.Session.Engine.Pool().Stats()
	fmt.Fprintf(r.Out, "  turns     %d\n", t.Turns)
	fmt.Fprintf(r.Out, "  prompts   %d tokens: %d reused from the cache (%.1f%%), %d computed\n", t.PromptTokens, t.ReusedTokens, t.ReusedPercent(), t.PromptTokens-t.ReusedTokens)
	fmt.Fprintf(r.Out, "  replies   %d tokens generated\n", t.GeneratedTokens)
	fmt.Fprintf(r.Out, "  pool      %d blocks of %d slots, %d B per token: %d used, %d cached, %d free\n",
		st.BlocksTotal, st.BlockSize, st.BytesPerToken, st.BlocksUsed, st.BlocksCached, st.BlocksFree)
}

// save writes the transcript.
func (r *Console) save(path string) error {
	if path == "" {
		return fmt.Errorf("/save needs a FILE")
	}
	if err := r.Session.SaveFile(path); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "(saved %d messages to %s)\n", len(r.Session.Messages()), path)
	return nil
}
