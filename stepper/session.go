// Package stepper drives a paged KV cache one command at a time, for tools that show what
// the cache does: `kvref step` in a terminal (package cacheview/textview) and its web page
// (cacheview.Stepper). A Session owns an engine; each command (Add, Decode, Fork, Free, ...)
// runs to completion and returns a record of what happened, the cache's own events
// included, so a viewer never has to diff snapshots. Undo takes back the last command by
// replaying every earlier one on a fresh pool.
//
// The command table (Commands) is the one list of the stepper's commands: the terminal
// parses its lines with it (Session.ParseLine), the web page posts the same Command as
// JSON, and both run it with Session.Do.
package stepper

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/logit"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
)

// Session drives an engine's cache one command at a time.
//
// A Session is not safe for concurrent use: drive it from one goroutine at a time (a server
// guards it with a mutex). It assumes nothing about terminals. It owns its engine and the
// engine's pool: nothing else may change the pool while the session lives. Reset and Undo
// replace the engine and every Seq: look sequences up again by id after them.
type Session struct {
	m        *model.Model
	cfg      engine.Config // the current engine's
	e        *engine.Engine
	sampling engine.Sampling
	check    bool
	seqs     map[int]*Seq
	attn     AttentionChoice
	events   []kvcache.Event // the running command's events
	log      []kvcache.Event // every event since the session started, in order

	// The history Undo replays: the session's starting state, then every operation since,
	// grouped into commands (marks[i] is the index in ops of command i's first operation).
	start     startState
	ops       []op
	marks     []int
	grouping  bool // inside Do: operations join the command Do began
	replaying bool // inside Undo: operations are not recorded, nor checked, nor probed

	probeMu sync.Mutex
	probe   [][]float32 // the chosen layer's weights by head, during a decode step
}

// startState is what a session started with.
type startState struct {
	cfg      engine.Config
	sampling engine.Sampling
	attn     AttentionChoice
}

// Seq is one live sequence of a session.
type Seq struct {
	KV     *kvcache.Sequence // the cache's sequence: tokens, block table
	Prompt int               // prompt tokens
	Parent int               // the sequence it was forked from, or -1
	Seed   uint64            // its sampling seed (from the session's seed and its id)
	Logits []float32         // at the last computed position: the next token's distribution

	reseeds uint64 // times the sampler was rebuilt, mixed into its seed
	sampler *engine.Sampler
}

// ID is the sequence's id in the pool.
func (q *Seq) ID() int { return q.KV.ID() }

// AttentionChoice selects the attention weights a decode step records: one layer, and one
// head or every head (Head < 0). Layer < 0 records nothing.
type AttentionChoice struct{ Layer, Head int }

// ErrBroken marks an error after which the session's state cannot be trusted (a failed
// forward pass, a failed check): the caller should end the session, or undo.
var ErrBroken = errors.New("stepper: the session's state can no longer be trusted")

// Options are a session's starting choices.
type Options struct {
	// Sampling: each sequence samples with a seed derived from Sampling.Seed and its id.
	Sampling engine.Sampling
	// Check compares every computed step's logits bit for bit with the cache-free
	// reference before the command returns.
	Check bool
	// Attention, when not nil, is the attention decode steps record from the start.
	Attention *AttentionChoice
}

// New starts a session on a new engine for m built with cfg. Close stops the engine; the
// model stays the caller's.
func New(m *model.Model, cfg engine.Config, opt Options) (*Session, error) {
	attn := AttentionChoice{Layer: -1, Head: -1}
	if opt.Attention != nil {
		attn = *opt.Attention
	}
	s := &Session{m: m, check: opt.Check, start: startState{cfg: cfg, sampling: opt.Sampling, attn: attn}}
	if err := s.restart(); err != nil {
		return nil, err
	}
	return s, nil
}

// restart builds the starting engine and forgets every sequence, setting and event.
func (s *Session) restart() error {
	if err := s.newEngine(s.start.cfg); err != nil {
		return err
	}
	s.sampling, s.attn, s.log = s.start.sampling, s.start.attn, nil
	return nil
}

// newEngine replaces the session's engine by a new one built with cfg, its pool empty.
func (s *Session) newEngine(cfg engine.Config) error {
	e, err := engine.New(s.m, cfg)
	if err != nil {
		return err
	}
	if s.e != nil {
		s.e.Pool().SetObserver(nil)
		s.e.Close()
	}
	s.e, s.cfg, s.seqs = e, cfg, map[int]*Seq{}
	e.Pool().SetObserver(func(ev kvcache.Event) {
		s.events = append(s.events, ev)
		s.log = append(s.log, ev)
	})
	return nil
}

// Close detaches the session from the pool's events and stops its engine.
func (s *Session) Close() {
	s.e.Pool().SetObserver(nil)
	s.e.Close()
}

// Engine returns the session's current engine (Reset and Undo replace it).
func (s *Session) Engine() *engine.Engine { return s.e }

// Model returns the session's model.
func (s *Session) Model() *model.Model { return s.m }

// Config returns the configuration of the current engine.
func (s *Session) Config() engine.Config { return s.cfg }

// Sampling returns the session's sampling parameters.
func (s *Session) Sampling() engine.Sampling { return s.sampling }

// Checked says whether every step is checked against the cache-free reference.
func (s *Session) Checked() bool { return s.check }

// Events returns every cache event since the session started, oldest first (a Reset's new
// pool goes on in the same list). The caller must not change it.
func (s *Session) Events() []kvcache.Event { return s.log }

// Seq returns live sequence id, or nil.
func (s *Session) Seq(id int) *Seq { return s.seqs[id] }

// Live returns the live sequences in id order.
func (s *Session) Live() []*Seq {
	out := make([]*Seq, 0, len(s.seqs))
	for _, q := range s.seqs {
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b *Seq) int { return a.ID() - b.ID() })
	return out
}

// Added is what Add did.
type Added struct {
	Seq    *Seq
	Hit    int             // prompt tokens whose K/V came from the cache
	Check  *Check          // the check of the prompt's last logits (nil: not checked)
	Events []kvcache.Event // the cache's events: prefix hits, allocations, evictions, indexing
}

// Check is a passed check of one step: its logits were recomputed without the cache.
type Check struct {
	Pos        int     // the position whose logits were compared
	MaxAbsDiff float64 // the largest difference over the vocabulary: 0, since they are bit-identical
}

// Add starts a sequence from prompt token ids: the cache supplies every full block of its
// prefix it already holds, and one forward pass computes the rest. An error wrapping
// kvcache.ErrOutOfBlocks leaves the pool as it was.
func (s *Session) Add(ids []int) (Added, error) {
	s.events = nil
	if len(ids) == 0 {
		return Added{}, fmt.Errorf("stepper: the prompt has no tokens")
	}
	if len(ids) >= s.e.Context() {
		return Added{}, fmt.Errorf("the prompt has %d tokens; the context holds %d and one more is needed to decode", len(ids), s.e.Context())
	}
	pool := s.e.Pool()
	kv := pool.AddSequence(ids, "")
	hit := kv.Computed()
	logits, check, err := s.compute(kv)
	if err != nil {
		pool.Free(kv)
		return Added{}, err
	}
	q := &Seq{KV: kv, Prompt: len(ids), Parent: -1, Seed: logit.ContinuationSeed(s.sampling.Seed, kv.ID()), Logits: logits}
	s.newSampler(q)
	s.seqs[kv.ID()] = q
	s.record(op{kind: opAdd, ids: slices.Clone(ids)})
	return Added{Seq: q, Hit: hit, Check: check, Events: s.takeEvents()}, nil
}

// Decoded is what one decode step did.
type Decoded struct {
	Seq    *Seq
	Pos    int     // the new token's position
	Token  int     // the token
	How    string  // "sampled", "greedy" or "picked"
	P      float64 // the model's probability of the token (softmax of the logits, no filters)
	Rank   int     // its rank among the logits (1: the most likely)
	Top    []int   // the most likely tokens of the distribution it came from, best first
	Probs  []float64
	Block  int                 // where its K/V went
	Slot   int                 //
	Cache  kvcache.Reservation // what reserving its slot did: a new block, a copy-on-write, evictions
	Check  *Check              // the check of the logits after it (nil: not checked)
	Events []kvcache.Event     // every cache event of the step
	// Attention holds, per head, the new token's attention weights over positions 0..Pos in
	// the chosen layer (nil entries for heads not chosen; nil when attention is off).
	Attention [][]float32
}

// Decode appends one token to sequence q and computes it: the token is forced when ≥ 0,
// else sampled from the logits q holds; the forward pass writes its K/V into its slot and
// gives the logits of the token after it. top alternatives are recorded. The slot is
// reserved before the token is chosen, so an out-of-blocks error changes nothing, not even
// the sampler's state.
func (s *Session) Decode(q *Seq, forced, top int) (Decoded, error) {
	s.events = nil
	kv := q.KV
	pos := kv.Len()
	if pos >= s.e.Context() {
		return Decoded{}, fmt.Errorf("seq %d fills the whole context (%d tokens); fork it, add a new prompt, or free it", kv.ID(), s.e.Context())
	}
	if forced >= s.e.Model().Config.Vocab {
		return Decoded{}, fmt.Errorf("stepper: token %d is outside the vocabulary of %d", forced, s.e.Model().Config.Vocab)
	}
	res, err := s.e.Pool().Reserve(kv, 1) // the Step in s.compute finds the slot reserved
	if err != nil {
		return Decoded{}, err
	}
	d := Decoded{Seq: q, Pos: pos, Token: forced, How: "picked", Cache: res}
	if forced < 0 {
		d.Token = q.sampler.Sample(q.Logits)
		d.How = "sampled"
		if s.sampling.Greedy() {
			d.How = "greedy"
		}
	}
	if !s.replaying {
		probs := logit.Softmax(q.Logits)
		d.P, d.Rank = probs[d.Token], logit.Rank(q.Logits, d.Token)
		d.Top = logit.TopK(q.Logits, top)
		d.Probs = make([]float64, len(d.Top))
		for i, id := range d.Top {
			d.Probs[i] = probs[id]
		}
	}
	d.Block, d.Slot = kv.Slot(pos)
	kv.Append(d.Token)
	if s.attn.Layer >= 0 && !s.replaying {
		s.probe = make([][]float32, s.e.Model().Config.Heads)
		s.e.Runner().SetAttentionProbe(s.recordAttention)
	}
	logits, check, err := s.compute(kv)
	s.e.Runner().SetAttentionProbe(nil)
	d.Attention, s.probe = s.probe, nil
	if err != nil {
		return d, err
	}
	q.Logits = logits
	d.Check = check
	d.Events = s.takeEvents()
	s.record(op{kind: opDecode, seq: q.ID(), forced: forced, token: d.Token})
	return d, nil
}

// MeanAttention is the mean over the recorded heads of a decode step's attention weights,
// summed in head order.
func (d Decoded) MeanAttention() []float64 {
	var mean []float64
	n := 0
	for _, w := range d.Attention {
		if w == nil {
			continue
		}
		if mean == nil {
			mean = make([]float64, len(w))
		}
		for i, v := range w {
			mean[i] += float64(v)
		}
		n++
	}
	for i := range mean {
		mean[i] /= float64(n)
	}
	return mean
}

// recordAttention receives attention weights during a decode step's forward pass (one
// row: the new token) and keeps those of the chosen layer and head(s).
func (s *Session) recordAttention(layer, row, head int, weights []float32) {
	if layer != s.attn.Layer || (s.attn.Head >= 0 && head != s.attn.Head) {
		return
	}
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	s.probe[head] = slices.Clone(weights)
}

// Forked is what Fork did.
type Forked struct {
	Seq    *Seq
	Events []kvcache.Event // one Forked event per shared block
}

// Fork starts a sibling of q that shares every block (each block's reference count goes up
// by one, nothing is copied) and the logits q holds. The sibling samples with its own seed.
func (s *Session) Fork(q *Seq) Forked {
	s.events = nil
	kv := s.e.Pool().Fork(q.KV)
	f := &Seq{KV: kv, Prompt: q.Prompt, Parent: q.ID(), Seed: logit.ContinuationSeed(s.sampling.Seed, kv.ID()), Logits: slices.Clone(q.Logits)}
	s.newSampler(f)
	s.seqs[kv.ID()] = f
	s.record(op{kind: opFork, seq: q.ID()})
	return Forked{Seq: f, Events: s.takeEvents()}
}

// Freed is what Free did.
type Freed struct {
	ID     int             // the sequence's id
	Table  []int           // the table the sequence had (group 0's)
	Tables [][]int         // every cache group's table, for a pool with groups
	Events []kvcache.Event // one Released event per block, last block first
}

// Free ends sequence q: its blocks lose a reference; full blocks nobody holds stay cached.
func (s *Session) Free(q *Seq) Freed {
	s.events = nil
	f := Freed{ID: q.ID(), Table: slices.Clone(q.KV.Table())}
	if s.e.Pool().Config().Groups != nil {
		for g := range s.e.Pool().Groups() {
			f.Tables = append(f.Tables, slices.Clone(q.KV.GroupTable(g)))
		}
	}
	s.e.Pool().Free(q.KV)
	delete(s.seqs, q.ID())
	s.record(op{kind: opFree, seq: q.ID()})
	f.Events = s.takeEvents()
	return f
}

// SetTemperature changes the temperature of every sequence and of those to come. Each
// sampler is rebuilt with a seed mixed from its sequence's seed and the number of rebuilds,
// so a session replays exactly.
func (s *Session) SetTemperature(t float64) {
	s.sampling.Temperature = t
	for _, q := range s.Live() {
		q.reseeds++
		s.newSampler(q)
	}
	s.record(op{kind: opTemperature, temperature: t})
}

// SetSeed changes the sampling seed: every live sequence, and every later one, samples
// with the seed derived from it and the sequence's id (as if the session had started with
// it), from a fresh sampler.
func (s *Session) SetSeed(seed uint64) {
	s.sampling.Seed = seed
	for _, q := range s.Live() {
		q.Seed = logit.ContinuationSeed(seed, q.ID())
		q.reseeds = 0
		s.newSampler(q)
	}
	s.record(op{kind: opSeed, seed: seed})
}

// SetAttention chooses the attention weights decode steps record.
func (s *Session) SetAttention(a AttentionChoice) {
	s.attn = a
	s.record(op{kind: opAttention, attn: a})
}

// Attention returns the current attention choice.
func (s *Session) Attention() AttentionChoice { return s.attn }

// Reset starts again on a new engine built with cfg, its pool empty and no sequence
// live; the sampling parameters and the attention choice stay. On an error (cfg is
// refused) nothing changes.
func (s *Session) Reset(cfg engine.Config) error {
	if err := s.newEngine(cfg); err != nil {
		return err
	}
	s.record(op{kind: opReset, cfg: cfg})
	return nil
}

// Owners maps each block in use to the live sequences holding it, as "seq[index]" pairs:
// sequence id and the block's place in its table, in sequence order.
func (s *Session) Owners() map[int][][2]int {
	out := map[int][][2]int{}
	for _, q := range s.Live() {
		for g := range s.e.Pool().Groups() {
			for i, id := range q.KV.GroupTable(g) {
				if id != kvcache.Hole {
					out[id] = append(out[id], [2]int{q.ID(), i})
				}
			}
		}
	}
	for _, o := range out {
		sort.SliceStable(o, func(i, j int) bool { return o[i][0] < o[j][0] })
	}
	return out
}

// newSampler gives q a sampler with the session's parameters and q's own seed.
func (s *Session) newSampler(q *Seq) {
	p := s.sampling
	p.Seed = logit.ContinuationSeed(q.Seed, int(q.reseeds))
	q.sampler = engine.NewSampler(p)
}

// compute runs q's uncomputed tokens through the cache and returns the logits at its last
// token, checked against the reference when the session checks (with the check's result).
// Out-of-blocks errors come back as they are; others are wrapped in ErrBroken.
func (s *Session) compute(kv *kvcache.Sequence) ([]float32, *Check, error) {
	logits, err := s.e.Step([]*kvcache.Sequence{kv})
	if errors.Is(err, kvcache.ErrOutOfBlocks) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBroken, err)
	}
	out := slices.Clone(logits[0])
	if !s.check || s.replaying {
		return out, nil, nil
	}
	cfg := s.e.Pool().Config()
	pos := kv.Len() - 1
	ref, err := s.e.Runner().Reference(kv.Tokens(), cfg.KType, cfg.VType, pos)
	if err == nil {
		err = engine.Compare(out, ref[0], kv.ID(), pos, pos)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBroken, err)
	}
	c := &Check{Pos: pos}
	for i, v := range out {
		c.MaxAbsDiff = math.Max(c.MaxAbsDiff, math.Abs(float64(v)-float64(ref[0][i])))
	}
	return out, c, nil
}

// takeEvents returns the running command's events and forgets them.
func (s *Session) takeEvents() []kvcache.Event {
	ev := s.events
	s.events = nil
	return ev
}
