package cacheview

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/stepper"
)

// Stepper is `kvref step --web`: a stepper.Session driven from the browser, one command at
// a time (POST /v1/step), on the same page as kvref serve's view. The Session is not safe
// for concurrent use, so every command and every snapshot holds the stepper's lock.
type Stepper struct {
	mu   sync.Mutex
	m    *model.Model
	name string
	sess *stepper.Session
	hub  *Hub
	last *StepToken  // the last decoded token, for an undo to restore
	undo []undoEntry // per command the session can undo
}

// undoEntry is what the page needs back when a command is undone: what the command did,
// the first event it published, and the last decoded token before it.
type undoEntry struct {
	message string
	from    int64
	last    *StepToken
}

// topAlternatives are the alternatives shown per decoded token.
const topAlternatives = 8

// NewStepper starts a session (stepper.New) on a new engine for m with cfg and opt. name is
// the model's name on the page. Close releases the engine; the model stays the caller's.
func NewStepper(m *model.Model, name string, cfg engine.Config, opt stepper.Options) (*Stepper, error) {
	sess, err := stepper.New(m, cfg, opt)
	if err != nil {
		return nil, err
	}
	return &Stepper{m: m, name: name, sess: sess, hub: NewHub(0)}, nil
}

// Close ends the session and stops the engine.
func (s *Stepper) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sess.Close()
}

// Handler serves the page, its endpoints (see Mount) and POST /v1/step.
func (s *Stepper) Handler() http.Handler {
	mux := http.NewServeMux()
	shape := s.m.Config.PlanShape()
	Mount(mux, Source{View: s.View, Hub: s.hub},
		Planner{This: &PlanModel{Name: s.name, Shape: shape, WeightsBytes: s.m.Weights.Bytes()}})
	mux.HandleFunc("/v1/step", s.serveStep)
	return mux
}

// Inspect runs f with the stepper's engine under its lock, between commands (for tests and
// tools that read the pool's own accounts). f must not keep the engine.
func (s *Stepper) Inspect(f func(e *engine.Engine)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.sess.Engine())
}

// Settings are the stepper's current choices, shown by the page's controls.
type Settings struct {
	Sampling  engine.Sampling `json:"sampling"`
	Layer     int             `json:"attention_layer"` // -1: attention not recorded
	Head      int             `json:"attention_head"`  // -1: the mean over heads
	Blocks    int             `json:"cache_blocks"`
	BlockSize int             `json:"block_size"`
	Check     bool            `json:"check"`
	Undoable  int             `json:"undoable"` // commands undo can take back
}

// settings reads the current settings; the lock must be held.
func (s *Stepper) settings() Settings {
	pc, a := s.sess.Engine().Pool().Config(), s.sess.Attention()
	return Settings{Sampling: s.sess.Sampling(), Layer: a.Layer, Head: a.Head,
		Blocks: pc.NumBlocks, BlockSize: pc.BlockSize, Check: s.sess.Checked(), Undoable: s.sess.Undoable()}
}

// View takes a snapshot of the session's pool, with each sequence's prompt length, parent
// and text, and the settings.
func (s *Stepper) View(context.Context) (View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	eng := s.sess.Engine()
	v := Build("step", s.name, eng, eng.Pool().Snapshot(), s.hub.Published())
	st := s.settings()
	v.Step = &st
	for i := range v.Sequences {
		q := s.sess.Seq(v.Sequences[i].ID)
		if q == nil {
			continue
		}
		v.Sequences[i].Prompt = q.Prompt
		if q.Parent >= 0 {
			parent := q.Parent
			v.Sequences[i].Parent = &parent
		}
		v.Sequences[i].Text = s.m.Tokenizer.Decode(q.KV.Tokens())
	}
	return v, nil
}

// StepRecord is what a command did, POST /v1/step's answer.
type StepRecord struct {
	Op       string      `json:"op"`
	Message  string      `json:"message"` // one sentence for the page's log
	Seq      int         `json:"seq"`     // the sequence the command produced or acted on (-1: none)
	Added    *StepPrompt `json:"added,omitempty"`
	Decoded  []StepToken `json:"decoded,omitempty"`
	Undone   *Undone     `json:"undone,omitempty"`
	Events   []Event     `json:"events"`
	Settings Settings    `json:"settings"`
}

// Undone is what undo took back.
type Undone struct {
	Message string `json:"message"` // what the command taken back had done
	// EventsFrom is the number of the first event that command published: the page's log
	// drops the events numbered from it on (none was published since).
	EventsFrom int64      `json:"events_from"`
	LastStep   *StepToken `json:"last_step"` // the last decoded token before it (null: none, or its sequence is gone)
}

// StepPrompt is what adding a prompt did.
type StepPrompt struct {
	Tokens []int    `json:"tokens"`
	Text   []string `json:"text"`
	Hit    int      `json:"hit"` // prompt tokens whose K/V came from the cache
}

// StepToken is one decoded token: what was chosen, from what, and where its K/V went.
type StepToken struct {
	Seq         int           `json:"seq"`
	Pos         int           `json:"pos"`
	Token       int           `json:"token"`
	Text        string        `json:"text"`
	How         string        `json:"how"` // sampled, greedy, picked
	P           float64       `json:"p"`   // the model's probability of it (before temperature and filters)
	Rank        int           `json:"rank"`
	Top         []Alternative `json:"top"`
	Block       int           `json:"block"`
	Slot        int           `json:"slot"`
	NewBlock    bool          `json:"new_block"`    // the step took a new block
	CopiedFrom  int           `json:"copied_from"`  // copy-on-write: the shared block copied (-1: none)
	CopiedSlots int           `json:"copied_slots"` // ... and its slots copied
	Evicted     []int         `json:"evicted"`      // cached blocks evicted to make room
	Attention   *Attention    `json:"attention,omitempty"`
	Checked     bool          `json:"checked"` // its logits were recomputed without the cache: bit-identical
}

// Alternative is one of the most likely tokens of a step.
type Alternative struct {
	Token int     `json:"token"`
	Text  string  `json:"text"`
	P     float64 `json:"p"`
}

// Attention is the new token's attention weights in one layer over positions 0..pos, and
// the block table they are read through (position p: block Table[p/B], slot p%B).
type Attention struct {
	Layer   int       `json:"layer"`
	Head    int       `json:"head"` // -1: the mean over the query heads
	Weights []float64 `json:"weights"`
	Table   []int     `json:"table"`
}

// stepError is a command's failure with its HTTP status.
type stepError struct {
	status int
	err    error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// badCommand is a 400 for a command that cannot run as given.
func badCommand(format string, args ...any) error {
	return &stepError{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

// serveStep runs one command.
func (s *Stepper) serveStep(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "POST /v1/step with a JSON command")
		return
	}
	cmd, err := readCommand(w, r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	rec, err := s.Do(cmd)
	if err != nil {
		status := http.StatusInternalServerError
		var se *stepError
		if errors.As(err, &se) {
			status = se.status
		}
		writeError(w, status, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

// Do runs one command of the stepper's table (stepper.Commands) and publishes its events.
// undo takes back the last command that changed the session: the record says what it had
// done and from which event on the page's log must forget it.
func (s *Stepper) Do(cmd stepper.Command) (StepRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cmd.Op == "undo" {
		return s.undoLocked()
	}
	if cmd.Op == "decode" && cmd.Top == 0 {
		cmd.Top = topAlternatives
	}
	n, last := s.sess.Undoable(), s.last
	r, err := s.sess.Do(cmd)
	if err != nil {
		return StepRecord{}, sessionError(err)
	}
	rec := s.record(cmd, r)
	from := s.hub.Published() + 1
	for i := range rec.Events {
		rec.Events[i].N = s.hub.Publish(rec.Events[i])
	}
	if s.sess.Undoable() > n {
		s.undo = append(s.undo, undoEntry{message: rec.Message, from: from, last: last})
	}
	return s.finish(cmd.Op, rec), nil
}

// finish fills in what every record has.
func (s *Stepper) finish(op string, rec StepRecord) StepRecord {
	if rec.Events == nil {
		rec.Events = []Event{}
	}
	rec.Op, rec.Settings = op, s.settings()
	return rec
}

// undoLocked takes back the last command; the lock is held.
func (s *Stepper) undoLocked() (StepRecord, error) {
	if err := s.sess.Undo(); err != nil {
		if errors.Is(err, stepper.ErrNothingToUndo) {
			return StepRecord{}, badCommand("nothing to undo: no command has changed the session since it started")
		}
		return StepRecord{}, sessionError(err)
	}
	e := undoEntry{message: "the last command", from: s.hub.Published() + 1}
	if k := len(s.undo); k > 0 {
		e, s.undo = s.undo[k-1], s.undo[:k-1]
	}
	s.hub.Retract(e.from)
	s.last = e.last
	if s.last != nil && s.sess.Seq(s.last.Seq) == nil {
		s.last = nil
	}
	rec := StepRecord{Seq: -1, Message: "undone: " + e.message + ". The pool, the tables and every sampler are as they were before it.",
		Undone: &Undone{Message: e.message, EventsFrom: e.from, LastStep: s.last}}
	return s.finish("undo", rec), nil
}

// sessionError classifies a session's error: a full cache is the learner's to fix (409);
// a broken session must be reset (500); any other error is a command that cannot run (400).
func sessionError(err error) error {
	switch {
	case errors.Is(err, kvcache.ErrOutOfBlocks):
		return &stepError{http.StatusConflict, fmt.Errorf("%w: free a sequence, or reset with more blocks", err)}
	case errors.Is(err, stepper.ErrBroken):
		return &stepError{http.StatusInternalServerError, fmt.Errorf("%w; reset or undo to start again", err)}
	}
	return &stepError{http.StatusBadRequest, err}
}

// poolEvents converts a record's cache events.
func poolEvents(evs []kvcache.Event) []Event {
	out := make([]Event, len(evs))
	for i, e := range evs {
		out[i] = PoolEvent(e)
	}
	return out
}

// label is a token's display text.
func (s *Stepper) label(id int) string { return TokenText(s.m.Tokenizer, id) }

// plural is "1 block" or "3 blocks".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// quoted shows a token's text in double quotes, as kvref step does.
func quoted(text string) string { return fmt.Sprintf("%q", text) }
