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
)

// Stepper is `kvref step --web`: an engine.Session driven from the browser, one command at
// a time (POST /v1/step), on the same page as kvref serve's view. The Session is not safe
// for concurrent use, so every command and every snapshot holds the stepper's lock.
type Stepper struct {
	mu       sync.Mutex
	m        *model.Model
	name     string
	cfg      engine.Config
	sampling engine.Sampling
	check    bool
	attn     engine.AttentionChoice
	eng      *engine.Engine
	sess     *engine.Session
	hub      *Hub
}

// Limits of the stepping commands.
const (
	MaxDecodeSteps  = 512  // most tokens one decode command computes
	MaxResetBlocks  = 4096 // most blocks a reset pool may have
	MaxBlockSize    = 256  // most slots per block after a reset
	topAlternatives = 8    // alternatives shown per decoded token
)

// NewStepper starts a session on a new engine for m with cfg, sampling as given, and each
// step checked against the cache-free reference when check is set. name is the model's
// name on the page. Close releases the engine; the model stays the caller's.
func NewStepper(m *model.Model, name string, cfg engine.Config, sampling engine.Sampling, check bool) (*Stepper, error) {
	s := &Stepper{m: m, name: name, cfg: cfg, sampling: sampling, check: check,
		attn: engine.AttentionChoice{Layer: -1, Head: -1}, hub: NewHub(0)}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// start builds the engine and the session from the stepper's settings.
func (s *Stepper) start() error {
	eng, err := engine.New(s.m, s.cfg)
	if err != nil {
		return err
	}
	s.eng = eng
	s.sess = eng.NewSession(s.sampling, s.check)
	s.sess.SetAttention(s.attn)
	return nil
}

// Close ends the session and stops the engine.
func (s *Stepper) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sess.Close()
	s.eng.Close()
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
	f(s.eng)
}

// Settings are the stepper's current choices, shown by the page's controls.
type Settings struct {
	Sampling  engine.Sampling `json:"sampling"`
	Layer     int             `json:"attention_layer"` // -1: attention not recorded
	Head      int             `json:"attention_head"`  // -1: the mean over heads
	Blocks    int             `json:"cache_blocks"`
	BlockSize int             `json:"block_size"`
	Check     bool            `json:"check"`
}

// settings reads the current settings; the lock must be held.
func (s *Stepper) settings() Settings {
	pc := s.eng.Pool.Config()
	return Settings{Sampling: s.sess.Sampling(), Layer: s.attn.Layer, Head: s.attn.Head,
		Blocks: pc.NumBlocks, BlockSize: pc.BlockSize, Check: s.check}
}

// View takes a snapshot of the session's pool, with each sequence's prompt length, parent
// and text, and the settings.
func (s *Stepper) View(context.Context) (View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := Build("step", s.name, s.eng, s.eng.Pool.Snapshot(), s.hub.Published())
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

// Command is one stepping command, POST /v1/step's body.
type Command struct {
	Op          string   `json:"op"`                    // add, decode, fork, free, temperature, seed, attention, reset
	Text        string   `json:"text,omitempty"`        // add: the prompt
	Seq         int      `json:"seq"`                   // decode, fork, free: the sequence
	N           int      `json:"n,omitempty"`           // decode: tokens (default 1)
	Token       *int     `json:"token,omitempty"`       // decode: this token instead of sampling one (n must be 1)
	Temperature *float64 `json:"temperature,omitempty"` // temperature
	Seed        *uint64  `json:"seed,omitempty"`        // seed
	Layer       *int     `json:"layer,omitempty"`       // attention: the layer (-1: off)
	Head        *int     `json:"head,omitempty"`        // attention: the head (-1: the mean over heads)
	Blocks      int      `json:"blocks,omitempty"`      // reset: blocks in the new pool (0: as before)
	BlockSize   int      `json:"block_size,omitempty"`  // reset: slots per block (0: as before)
}

// Record is what a command did.
type Record struct {
	Op       string    `json:"op"`
	Message  string    `json:"message"` // one sentence for the page's log
	Seq      int       `json:"seq"`     // the sequence the command produced or acted on (-1: none)
	Added    *Added    `json:"added,omitempty"`
	Decoded  []Decoded `json:"decoded,omitempty"`
	Events   []Event   `json:"events"`
	Settings Settings  `json:"settings"`
}

// Added is what adding a prompt did.
type Added struct {
	Tokens []int    `json:"tokens"`
	Text   []string `json:"text"`
	Hit    int      `json:"hit"` // prompt tokens whose K/V came from the cache
}

// Decoded is one decoded token: what was chosen, from what, and where its K/V went.
type Decoded struct {
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

// Do runs one command and publishes its events.
func (s *Stepper) Do(cmd Command) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.do(cmd)
	if err != nil {
		return Record{}, err
	}
	for i := range rec.Events {
		rec.Events[i].N = s.hub.Publish(rec.Events[i])
	}
	if rec.Events == nil {
		rec.Events = []Event{}
	}
	rec.Op, rec.Settings = cmd.Op, s.settings()
	return rec, nil
}

// sessionError classifies a session's error: a full cache is the learner's to fix (409);
// a broken session must be reset (500).
func sessionError(err error) error {
	switch {
	case errors.Is(err, kvcache.ErrOutOfBlocks):
		return &stepError{http.StatusConflict, fmt.Errorf("%w: free a sequence, or reset with more blocks", err)}
	case errors.Is(err, engine.ErrSessionBroken):
		return &stepError{http.StatusInternalServerError, fmt.Errorf("%w; reset to start again", err)}
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
