package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/kvref/kvref/cacheview/textview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/repl"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/stepper"
)

// stepTerm is a `kvref step` session in a terminal: the library's stepper.Session (which
// owns the engine, the cache and the sequences and reports what each command did) behind a
// textview.Console, which holds the current sequence and prints each command's record.
type stepTerm struct {
	*textview.Console
	sess *stepper.Session
	m    *model.Model // closed with the session

	// afterCommand, when set, is called after every command with its line: tests use it
	// to compare what was printed with the pool's own state.
	afterCommand func(line string)
}

// newStepTerm loads the model, starts the session, and runs the prompt's prefill.
func newStepTerm(o stepOptions, stdout, stderr io.Writer, color bool) (*stepTerm, error) {
	cfg, err := o.engineFlags.config(1)
	if err != nil {
		return nil, err
	}
	m, err := o.modelFlags.open(stderr)
	if err != nil {
		return nil, err
	}
	attn, err := stepper.ParseAttention(o.attn, m.Config.Layers, m.Config.Heads)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("--attn: %w", err)
	}
	sess, err := stepper.New(m, cfg, stepper.Options{Sampling: o.sampling, Check: o.check, Attention: &attn})
	if err != nil {
		m.Close()
		return nil, err
	}
	s := &stepTerm{sess: sess, m: m,
		Console: &textview.Console{View: textview.View{Session: sess, Out: stdout, Color: color, Top: o.top}}}
	s.Header()
	if err := s.Add(o.prompt); err != nil {
		s.close()
		return nil, sessionError(err)
	}
	return s, nil
}

// eng is the session's current engine (an undo replaces it).
func (s *stepTerm) eng() *engine.Engine { return s.sess.Engine() }

// close ends the session, stops the engine and closes the model.
func (s *stepTerm) close() {
	s.sess.Close()
	s.m.Close()
}

// prompt is the command prompt, naming the current sequence.
func (s *stepTerm) prompt() string {
	if s.Cur == nil {
		return "step>"
	}
	return fmt.Sprintf("seq %d>", s.Cur.ID())
}

// sessionError adds what a learner can do to a console's error: a full cache can be made
// room in, kvref tokenize shows a text's tokens; a broken session ends.
func sessionError(err error) error {
	switch {
	case errors.As(err, new(textview.NoTokenError)):
		return fmt.Errorf("%w (kvref tokenize -m MODEL TEXT shows how a text splits into tokens)", err)
	case errors.Is(err, kvcache.ErrOutOfBlocks):
		return fmt.Errorf("%w (free a sequence with free N, or start again with more --cache-blocks)", err)
	case errors.Is(err, stepper.ErrBroken):
		return repl.FatalError{Err: err}
	}
	return err
}
