package engine

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/kvref/kvref/internal/logit"
	"github.com/kvref/kvref/kvcache"
)

// Session drives an engine's cache one command at a time, for tools that show what the
// cache does: `kvref step` in a terminal, the web view in a browser. Each command (Add,
// Decode, Fork, Free, ...) runs to completion and returns a record of what happened, the
// cache's own events included, so a viewer never has to diff snapshots.
//
// A Session is not safe for concurrent use: drive it from one goroutine at a time (a server
// guards it with a mutex). It assumes nothing about terminals. It owns the engine's pool:
// nothing else may change the pool while the session lives.
type Session struct {
	e        *Engine
	sampling Sampling
	check    bool
	seqs     map[int]*SessionSeq
	attn     AttentionChoice
	events   []kvcache.Event // the running command's events

	probeMu sync.Mutex
	probe   [][]float32 // the chosen layer's weights by head, during a decode step
}

// SessionSeq is one live sequence of a session.
type SessionSeq struct {
	KV     *kvcache.Sequence // the cache's sequence: tokens, block table
	Prompt int               // prompt tokens
	Parent int               // the sequence it was forked from, or -1
	Seed   uint64            // its sampling seed (from the session's seed and its id)
	Logits []float32         // at the last computed position: the next token's distribution

	reseeds uint64 // times the sampler was rebuilt, mixed into its seed
	sampler *Sampler
}

// ID is the sequence's id in the pool.
func (q *SessionSeq) ID() int { return q.KV.ID() }

// AttentionChoice selects the attention weights a decode step records: one layer, and one
// head or every head (Head < 0). Layer < 0 records nothing.
type AttentionChoice struct{ Layer, Head int }

// ErrSessionBroken marks an error after which the session's state cannot be trusted (a
// failed forward pass, a failed check): the caller should end the session.
var ErrSessionBroken = errors.New("engine: the session's state can no longer be trusted")

// NewSession starts a session on the engine's pool with the given sampling parameters
// (each sequence samples with a seed derived from sampling.Seed and its id). With check,
// every computed step's logits are compared bit for bit with the cache-free reference
// before the command returns.
func (e *Engine) NewSession(sampling Sampling, check bool) *Session {
	s := &Session{e: e, sampling: sampling, check: check, seqs: map[int]*SessionSeq{}, attn: AttentionChoice{-1, -1}}
	e.Pool.SetObserver(func(ev kvcache.Event) { s.events = append(s.events, ev) })
	return s
}

// Close detaches the session from the pool's events. The engine stays open.
func (s *Session) Close() { s.e.Pool.SetObserver(nil) }

// Engine returns the session's engine.
func (s *Session) Engine() *Engine { return s.e }

// Sampling returns the session's sampling parameters.
func (s *Session) Sampling() Sampling { return s.sampling }

// Seq returns live sequence id, or nil.
func (s *Session) Seq(id int) *SessionSeq { return s.seqs[id] }

// Live returns the live sequences in id order.
func (s *Session) Live() []*SessionSeq {
	out := make([]*SessionSeq, 0, len(s.seqs))
	for _, q := range s.seqs {
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b *SessionSeq) int { return a.ID() - b.ID() })
	return out
}

// Added is what Add did.
type Added struct {
	Seq    *SessionSeq
	Hit    int             // prompt tokens whose K/V came from the cache
	Events []kvcache.Event // the cache's events: prefix hits, allocations, evictions, indexing
}

// Add starts a sequence from prompt token ids: the cache supplies every full block of its
// prefix it already holds, and one forward pass computes the rest. An error wrapping
// kvcache.ErrOutOfBlocks leaves the pool as it was.
func (s *Session) Add(ids []int) (Added, error) {
	s.events = nil
	if len(ids) == 0 {
		return Added{}, fmt.Errorf("engine: the prompt has no tokens")
	}
	if len(ids) >= s.e.Context {
		return Added{}, fmt.Errorf("engine: the prompt has %d tokens; the context holds %d and one more is needed to decode", len(ids), s.e.Context)
	}
	pool := s.e.Pool
	kv := pool.AddSequence(ids, "")
	hit := kv.Computed()
	logits, err := s.compute(kv)
	if err != nil {
		pool.Free(kv)
		return Added{}, err
	}
	q := &SessionSeq{KV: kv, Prompt: len(ids), Parent: -1, Seed: logit.ContinuationSeed(s.sampling.Seed, kv.ID()), Logits: logits}
	s.newSampler(q)
	s.seqs[kv.ID()] = q
	return Added{Seq: q, Hit: hit, Events: s.takeEvents()}, nil
}

// Decoded is what one decode step did.
type Decoded struct {
	Seq    *SessionSeq
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
func (s *Session) Decode(q *SessionSeq, forced, top int) (Decoded, error) {
	s.events = nil
	kv := q.KV
	pos := kv.Len()
	if pos >= s.e.Context {
		return Decoded{}, fmt.Errorf("engine: sequence %d fills the whole context (%d tokens)", kv.ID(), s.e.Context)
	}
	if forced >= s.e.Model.Config.Vocab {
		return Decoded{}, fmt.Errorf("engine: token %d is outside the vocabulary of %d", forced, s.e.Model.Config.Vocab)
	}
	res, err := s.e.reserve([]span{{kv, 1}}) // the Step in s.compute finds the slot reserved
	if err != nil {
		return Decoded{}, err
	}
	d := Decoded{Seq: q, Pos: pos, Token: forced, How: "picked", Cache: res[0]}
	if forced < 0 {
		d.Token = q.sampler.Sample(q.Logits)
		d.How = "sampled"
		if s.sampling.Greedy() {
			d.How = "greedy"
		}
	}
	probs := logit.Softmax(q.Logits)
	d.P, d.Rank = probs[d.Token], logit.Rank(q.Logits, d.Token)
	d.Top = logit.TopK(q.Logits, top)
	d.Probs = make([]float64, len(d.Top))
	for i, id := range d.Top {
		d.Probs[i] = probs[id]
	}
	d.Block, d.Slot = kv.Slot(pos)
	kv.Append(d.Token)
	if s.attn.Layer >= 0 {
		s.probe = make([][]float32, s.e.Model.Config.Heads)
		s.e.Runner.SetAttentionProbe(s.record)
	}
	logits, err := s.compute(kv)
	s.e.Runner.SetAttentionProbe(nil)
	d.Attention, s.probe = s.probe, nil
	if err != nil {
		return d, err
	}
	q.Logits = logits
	d.Events = s.takeEvents()
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

// record receives attention weights during a decode step's forward pass (one row: the new
// token) and keeps those of the chosen layer and head(s).
func (s *Session) record(layer, row, head int, weights []float32) {
	if layer != s.attn.Layer || (s.attn.Head >= 0 && head != s.attn.Head) {
		return
	}
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	s.probe[head] = slices.Clone(weights)
}

// Forked is what Fork did.
type Forked struct {
	Seq    *SessionSeq
	Events []kvcache.Event // one Forked event per shared block
}

// Fork starts a sibling of q that shares every block (each block's reference count goes up
// by one, nothing is copied) and the logits q holds. The sibling samples with its own seed.
func (s *Session) Fork(q *SessionSeq) Forked {
	s.events = nil
	kv := s.e.Pool.Fork(q.KV)
	f := &SessionSeq{KV: kv, Prompt: q.Prompt, Parent: q.ID(), Seed: logit.ContinuationSeed(s.sampling.Seed, kv.ID()), Logits: slices.Clone(q.Logits)}
	s.newSampler(f)
	s.seqs[kv.ID()] = f
	return Forked{Seq: f, Events: s.takeEvents()}
}

// Freed is what Free did.
type Freed struct {
	Table  []int           // the table the sequence had (group 0's)
	Tables [][]int         // every cache group's table, for a pool with groups
	Events []kvcache.Event // one Released event per block, last block first
}

// Free ends sequence q: its blocks lose a reference; full blocks nobody holds stay cached.
func (s *Session) Free(q *SessionSeq) Freed {
	s.events = nil
	f := Freed{Table: slices.Clone(q.KV.Table())}
	if s.e.Pool.Config().Groups != nil {
		for g := range s.e.Pool.Groups() {
			f.Tables = append(f.Tables, slices.Clone(q.KV.GroupTable(g)))
		}
	}
	s.e.Pool.Free(q.KV)
	delete(s.seqs, q.ID())
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
}

// SetAttention chooses the attention weights decode steps record.
func (s *Session) SetAttention(a AttentionChoice) { s.attn = a }

// Attention returns the current attention choice.
func (s *Session) Attention() AttentionChoice { return s.attn }

// Owners maps each block in use to the live sequences holding it, as "seq[index]" pairs:
// sequence id and the block's place in its table (in its cache group's table, for a pool
// with groups: a block serves one group), in sequence order.
func (s *Session) Owners() map[int][][2]int {
	out := map[int][][2]int{}
	for _, q := range s.Live() {
		for g := range s.e.Pool.Groups() {
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
func (s *Session) newSampler(q *SessionSeq) {
	p := s.sampling
	p.Seed = logit.ContinuationSeed(q.Seed, int(q.reseeds))
	q.sampler = NewSampler(p)
}

// compute runs q's uncomputed tokens through the cache and returns the logits at its last
// token, checked against the reference when the session checks. Out-of-blocks errors come
// back as they are; others are wrapped in ErrSessionBroken.
func (s *Session) compute(kv *kvcache.Sequence) ([]float32, error) {
	logits, err := s.e.Step([]*kvcache.Sequence{kv})
	if errors.Is(err, kvcache.ErrOutOfBlocks) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSessionBroken, err)
	}
	out := slices.Clone(logits[0])
	if s.check {
		cfg := s.e.Pool.Config()
		pos := kv.Len() - 1
		ref, err := s.e.Runner.Reference(kv.Tokens(), cfg.KType, cfg.VType, pos)
		if err == nil {
			err = Compare(out, ref[0], kv.ID(), pos, pos)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSessionBroken, err)
		}
	}
	return out, nil
}

// takeEvents returns the running command's events and forgets them.
func (s *Session) takeEvents() []kvcache.Event {
	ev := s.events
	s.events = nil
	return ev
}
