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
// the cache and the sequences and reports what each command did) behind a
// textview.Console, which holds the current sequence and prints each command's record, and
// the engine and model it owns.
type stepper struct {
	*textview.Console
	m    *model.Model
	eng  *engine.Engine
	sess *engine.Session

	closeEngine func() // stops the engine and closes the model

	// afterCommand, when set, is called after every command with its line: tests use it
	// to compare what was printed with the pool's own state.
	afterCommand func(line string)
}

// newStepper loads the model, builds the engine and the session, and runs the prompt's
// prefill.
func newStepper(o stepOptions, stdout, stderr io.Writer, color bool) (*stepper, error) {
	eng, closeEngine, err := openEngine(&o.modelFlags, &o.engineFlags, 1, stderr)
	if err != nil {
		return nil, err
	}
	attn, err := parseAttention(o.attn, eng.Model.Config)
	if err != nil {
		closeEngine()
		return nil, fmt.Errorf("--attn: %w", err)
	}
	sess := eng.NewSession(o.sampling, o.check)
	sess.SetAttention(attn)
	s := &stepper{m: eng.Model, eng: eng, sess: sess, closeEngine: closeEngine,
		Console: &textview.Console{View: textview.View{Session: sess, Out: stdout, Color: color, Top: o.top}}}
	s.Header()
	if err := s.add(o.prompt); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close ends the session, stops the engine and closes the model.
func (s *stepper) close() {
	s.sess.Close()
	s.closeEngine()
}

// prompt is the command prompt, naming the current sequence.
func (s *stepper) prompt() string { return fmt.Sprintf("seq %d>", s.Cur.ID()) }

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

// add starts a sequence from a prompt and makes it current (textview.Console.Add), and
// says what Enter does.
func (s *stepper) add(text string) error {
	if err := s.Add(text); err != nil {
		return sessionError(err)
	}
	fmt.Fprintf(s.Out, "Enter decodes the next token of seq %d; help lists the commands.\n", s.Cur.ID())
	return nil
}

// parseAttention reads an --attn or attn argument for the model (engine.ParseAttention).
func parseAttention(arg string, c model.Config) (engine.AttentionChoice, error) {
	return engine.ParseAttention(arg, c.Layers, c.Heads)
}
