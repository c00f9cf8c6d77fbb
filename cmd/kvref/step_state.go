package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvref/kvref/cacheview/textview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
)

// stepper is a `kvref step` session in a terminal: the library's engine.Session (which owns
// the cache and the sequences and reports what each command did), the current sequence,
// and the view that prints (textview: colours, alternatives per token). Every command is a
// method that calls the session and prints its record.
type stepper struct {
	m    *model.Model
	eng  *engine.Engine
	sess *engine.Session
	view *textview.View
	cur  *engine.SessionSeq // the sequence that n, pick and fork act on

	// afterCommand, when set, is called after every command with its line: tests use it
	// to compare what was printed with the pool's own state.
	afterCommand func(line string)
}

// newStepper loads the model, builds the engine and the session, and runs the prompt's
// prefill.
func newStepper(o stepOptions, stdout, stderr io.Writer, color bool) (*stepper, error) {
	cfg, err := o.engineFlags.config(1)
	if err != nil {
		return nil, err
	}
	m, err := o.modelFlags.open(stderr)
	if err != nil {
		return nil, err
	}
	attn, err := parseAttention(o.attn, m.Config)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("--attn: %w", err)
	}
	eng, err := engine.New(m, cfg)
	if err != nil {
		m.Close()
		return nil, err
	}
	sess := eng.NewSession(o.sampling, o.check)
	sess.SetAttention(attn)
	s := &stepper{m: m, eng: eng, sess: sess, view: &textview.View{Session: sess, Out: stdout, Color: color, Top: o.top}}
	s.view.Header()
	if err := s.add(o.prompt); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close ends the session, stops the engine and closes the model.
func (s *stepper) close() {
	s.sess.Close()
	s.eng.Close()
	s.m.Close()
}

// prompt is the command prompt, naming the current sequence.
func (s *stepper) prompt() string { return fmt.Sprintf("seq %d>", s.cur.ID()) }

// live returns the live sequences in id order.
func (s *stepper) live() []*engine.SessionSeq { return s.sess.Live() }

// lookup finds a live sequence by the number the user typed.
func (s *stepper) lookup(arg string) (*engine.SessionSeq, error) {
	id, err := strconv.Atoi(arg)
	if q := s.sess.Seq(id); err == nil && q != nil {
		return q, nil
	}
	var ids []string
	for _, q := range s.live() {
		ids = append(ids, strconv.Itoa(q.ID()))
	}
	return nil, fmt.Errorf("no sequence %q; the live ones are %s (seqs lists them)", arg, strings.Join(ids, ", "))
}

// sessionError adds what a learner can do to a session error: a full cache can be made room
// in; a broken session ends.
func sessionError(err error) error {
	switch {
	case errors.Is(err, kvcache.ErrOutOfBlocks):
		return fmt.Errorf("%w (free a sequence with free N, or start again with more --cache-blocks)", err)
	case errors.Is(err, engine.ErrSessionBroken):
		return fatalError{err}
	}
	return err
}

// add starts a sequence from a prompt (the session reuses cached blocks of its prefix and
// computes the rest) and makes it current.
func (s *stepper) add(text string) error {
	ids := s.m.Tokenizer.EncodeSpecial(text, true, true)
	if len(ids) == 0 {
		return fmt.Errorf("the prompt %q has no tokens (this tokenizer adds no BOS); give some text", text)
	}
	a, err := s.sess.Add(ids)
	if err != nil {
		return sessionError(err)
	}
	s.cur = a.Seq
	s.view.Added(a, text)
	fmt.Fprintf(s.view.Out, "Enter decodes the next token of seq %d; help lists the commands.\n", a.Seq.ID())
	return nil
}

// next decodes k tokens of the current sequence, one forward pass each.
func (s *stepper) next(k int) error {
	for range k {
		if err := s.decode(-1); err != nil {
			return err
		}
	}
	return nil
}

// decode appends one token to the current sequence (forced when ≥ 0, else sampled) and
// computes it, then shows where its K/V landed. Sampling a token and computing it happen in
// one command so that the display can say where the token's K/V went.
func (s *stepper) decode(forced int) error {
	if pos := s.cur.KV.Len(); pos >= s.eng.Context {
		return fmt.Errorf("seq %d fills the whole context (%d tokens); fork it, add a new prompt, or free it", s.cur.ID(), s.eng.Context)
	}
	d, err := s.sess.Decode(s.cur, forced, s.view.Top)
	if err != nil {
		return sessionError(err)
	}
	s.view.Decoded(d)
	if s.m.Tokenizer.IsEOG(d.Token) {
		s.view.Field("note", "%s ends the text; n goes on anyway", s.view.TokenLabel(d.Token))
	}
	return nil
}

// fork starts a sibling of the current sequence sharing every block and switches to it.
func (s *stepper) fork() error {
	parent := s.cur
	f := s.sess.Fork(parent)
	s.cur = f.Seq
	s.view.Forked(parent, f.Seq, fmt.Sprintf("switch %d goes back", parent.ID()))
	return nil
}

// switchTo makes q the current sequence.
func (s *stepper) switchTo(q *engine.SessionSeq) error {
	s.cur = q
	s.view.Switched(q)
	return nil
}

// free ends sequence q, which must not be the current one.
func (s *stepper) free(q *engine.SessionSeq) error {
	if q == s.cur {
		return fmt.Errorf("seq %d is the current sequence; switch to another one first (seqs lists them)", q.ID())
	}
	f := s.sess.Free(q)
	s.view.Freed(q, f)
	return nil
}

// setTemperature changes the temperature of every sequence and of those to come.
func (s *stepper) setTemperature(t float64) {
	s.sess.SetTemperature(t)
	note := ""
	if t == 0 {
		note = " (greedy: always the most likely token)"
	}
	s.view.Say("temp    %g for every sequence from now on%s", t, note)
}

// setAttention handles the attn command.
func (s *stepper) setAttention(arg string) error {
	a, err := parseAttention(arg, s.m.Config)
	if err != nil {
		return fmt.Errorf("attn: %w", err)
	}
	s.sess.SetAttention(a)
	if a.Layer < 0 {
		s.view.Say("attn    off")
		return nil
	}
	s.view.Say("attn    %s for each new token from now on", s.view.AttentionName())
	return nil
}

// parseAttention reads an --attn or attn argument for the model (engine.ParseAttention).
func parseAttention(arg string, c model.Config) (engine.AttentionChoice, error) {
	return engine.ParseAttention(arg, c.Layers, c.Heads)
}
