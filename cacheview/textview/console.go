package textview

import (
	"fmt"

	"github.com/kvref/kvref/engine"
)

// Console is a session seen through a View, with a current sequence: the commands of a
// text front end such as kvref step, each of which calls the session and prints what it
// did. Where a line says what to do next it names the console's own commands as kvref step
// spells them ("n goes on anyway", "switch 0 goes back"). An error from the session (out
// of blocks, a failed forward pass) is returned as it is and leaves the console as it was.
// Like the session, a Console is used from one goroutine at a time.
type Console struct {
	View
	Cur *engine.SessionSeq // the sequence Decode and Fork act on; nil before the first Add
}

// Add starts a sequence from a prompt, special tokens in it parsed (the session reuses
// cached blocks of its prefix and computes the rest), prints it and makes it current.
func (c *Console) Add(text string) error {
	ids := c.model().Tokenizer.EncodeSpecial(text, true, true)
	if len(ids) == 0 {
		return fmt.Errorf("the prompt %q has no tokens (this tokenizer adds no BOS); give some text", text)
	}
	a, err := c.Session.Add(ids)
	if err != nil {
		return err
	}
	c.Cur = a.Seq
	c.Added(a, text)
	return nil
}

// Next decodes k tokens of the current sequence, one forward pass each.
func (c *Console) Next(k int) error {
	for range k {
		if err := c.Decode(-1); err != nil {
			return err
		}
	}
	return nil
}

// Decode appends one token to the current sequence (forced when ≥ 0, else sampled) and
// computes it, then shows where its K/V landed. Sampling a token and computing it happen in
// one command so that the display can say where the token's K/V went.
func (c *Console) Decode(forced int) error {
	if ctx := c.engine().Context; c.Cur.KV.Len() >= ctx {
		return fmt.Errorf("seq %d fills the whole context (%d tokens); fork it, add a new prompt, or free it", c.Cur.ID(), ctx)
	}
	d, err := c.Session.Decode(c.Cur, forced, c.Top)
	if err != nil {
		return err
	}
	c.Decoded(d)
	if c.model().Tokenizer.IsEOG(d.Token) {
		c.Field("note", "%s ends the text; n goes on anyway", c.TokenLabel(d.Token))
	}
	return nil
}

// Fork starts a sibling of the current sequence sharing every block and makes it current.
func (c *Console) Fork() {
	parent := c.Cur
	f := c.Session.Fork(parent)
	c.Cur = f.Seq
	c.Forked(parent, f.Seq, fmt.Sprintf("switch %d goes back", parent.ID()))
}

// Switch makes q the current sequence.
func (c *Console) Switch(q *engine.SessionSeq) {
	c.Cur = q
	c.Switched(q)
}

// Free ends sequence q, which must not be the current one.
func (c *Console) Free(q *engine.SessionSeq) error {
	if q == c.Cur {
		return fmt.Errorf("seq %d is the current sequence; switch to another one first (seqs lists them)", q.ID())
	}
	c.Freed(q, c.Session.Free(q))
	return nil
}

// SetTop shows k alternatives for each token from now on.
func (c *Console) SetTop(k int) {
	c.Top = k
	c.Say("top     %d alternatives per token from now on", k)
}

// SetTemperature changes the temperature of every sequence and of those to come.
func (c *Console) SetTemperature(t float64) {
	c.Session.SetTemperature(t)
	note := ""
	if t == 0 {
		note = " (greedy: always the most likely token)"
	}
	c.Say("temp    %g for every sequence from now on%s", t, note)
}

// SetAttention chooses the attention each decode step shows (a Layer < 0: none).
func (c *Console) SetAttention(a engine.AttentionChoice) {
	c.Session.SetAttention(a)
	if a.Layer < 0 {
		c.Say("attn    off")
		return
	}
	c.Say("attn    %s for each new token from now on", c.AttentionName())
}
