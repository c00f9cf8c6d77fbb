package textview

import (
	"fmt"

	"github.com/kvref/kvref/stepper"
)

// Console is a session seen through a View, with a current sequence: the commands of a
// text front end such as kvref step, each of which runs a command of the session and
// prints what it did. Where a line says what to do next it names the console's own
// commands as kvref step spells them ("n goes on anyway", "switch 0 goes back"). An error
// from the session (out of blocks, a failed forward pass) is returned as it is and leaves
// the console as it was. Like the session, a Console is used from one goroutine at a time.
type Console struct {
	View
	Cur *stepper.Seq // the sequence decode and fork act on; nil before the first add

	undo []undoEntry // per command the session can undo: what undo says and restores
}

// undoEntry is one command the session can take back: its line, the sequence that was
// current before it, and the session's count of undoable commands with it.
type undoEntry struct {
	line string
	cur  int
	n    int
}

// curID is the current sequence's id, or -1.
func (c *Console) curID() int {
	if c.Cur == nil {
		return -1
	}
	return c.Cur.ID()
}

// Add starts a sequence from a prompt, special tokens in it parsed (the session reuses
// cached blocks of its prefix and computes the rest), prints it, makes it current and says
// what Enter does.
func (c *Console) Add(text string) error {
	return c.run(stepper.Command{Op: "add", Text: text}, fmt.Sprintf("add %q", text))
}

// run runs a command of the session and prints what it did; line is how the user typed
// it (undo names it).
func (c *Console) run(cmd stepper.Command, line string) error {
	if cmd.Op == "decode" {
		cmd.Top = c.Top
	}
	cur, n := c.curID(), c.Session.Undoable()
	if cmd.Op == "undo" {
		last := undoEntry{cur: cur}
		if k := len(c.undo); k > 0 && c.undo[k-1].n == n {
			last, c.undo = c.undo[k-1], c.undo[:k-1]
		}
		if err := c.Session.Undo(); err != nil {
			return err
		}
		c.Cur = c.Session.Seq(last.cur) // the undo replaced every sequence
		c.Undone(last.line, c.Cur)
		return nil
	}
	r, err := c.Session.DoEach(cmd, c.stepped)
	if c.Session.Undoable() > n {
		c.undo = append(c.undo, undoEntry{line: line, cur: cur, n: c.Session.Undoable()})
	}
	if err != nil {
		return err
	}
	switch cmd.Op {
	case "add":
		c.Cur = r.Seq
		c.Added(*r.Added, cmd.Text)
		fmt.Fprintf(c.Out, "Enter decodes the next token of seq %d; help lists the commands.\n", c.Cur.ID())
	case "decode":
		return r.Stopped
	case "fork":
		parent := c.Cur
		c.Cur = r.Seq
		c.Forked(parent, r.Seq, fmt.Sprintf("switch %d goes back", parent.ID()))
	case "free":
		c.Freed(*r.Freed)
	case "temperature":
		note := ""
		if *cmd.Temperature == 0 {
			note = " (greedy: always the most likely token)"
		}
		c.Say("temp    %g for every sequence from now on%s", *cmd.Temperature, note)
	case "seed":
		c.Say("seed    %d: every sequence samples with a seed derived from it and its id, from now on", *cmd.Seed)
	case "attention":
		if *cmd.Layer < 0 {
			c.Say("attn    off")
			break
		}
		c.Say("attn    %s for each new token from now on", c.AttentionName())
	}
	return nil
}

// stepped prints one decode step as soon as it is done (the pool as it is then).
func (c *Console) stepped(d stepper.Decoded) {
	c.Decoded(d)
	if c.model().Tokenizer.IsEOG(d.Token) {
		c.Field("note", "%s ends the text; n goes on anyway", c.TokenLabel(d.Token))
	}
}
