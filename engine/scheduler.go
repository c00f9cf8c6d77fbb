package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvref/kvref/internal/logit"
	"github.com/kvref/kvref/kvcache"
)

// SchedulerConfig tunes continuous batching.
type SchedulerConfig struct {
	MaxBatchTokens  int // tokens per step, decode tokens and prefill chunks together (0: 2048)
	ChunkSize       int // most prefill tokens of one sequence in one step (0: MaxBatchTokens)
	MaxSequences    int // most sequences running at once (0: 256)
	WatermarkBlocks int // blocks kept free when admitting a request, for decode growth (-1: none; 0: 1% of the pool)
	// Observer, when set, is called on the scheduler's goroutine with every admission,
	// preemption and fork (scheduler_events.go). It must be quick and must not call the scheduler.
	Observer func(SchedulerEvent)
	// ReuseLogits writes every step's logits into one array that the scheduler keeps, so
	// that the Logits of the Tokens and PromptRows a Step returns are valid only until the
	// next Step (clone what you keep). A step allocates a vocabulary of float32 per
	// sequence otherwise (2 MB for 16 sequences of 32,000 tokens), which the process pages
	// in anew until the garbage collector's next cycle. Steps that run a request with
	// Request.Check still take a fresh array: its verifier holds the logits across steps.
	ReuseLogits bool
}

func (c SchedulerConfig) withDefaults(pool kvcache.Config) SchedulerConfig {
	if c.MaxBatchTokens <= 0 {
		c.MaxBatchTokens = 2048
	}
	if c.ChunkSize <= 0 || c.ChunkSize > c.MaxBatchTokens {
		c.ChunkSize = c.MaxBatchTokens
	}
	if c.MaxSequences <= 0 {
		c.MaxSequences = 256
	}
	switch {
	case c.WatermarkBlocks < 0:
		c.WatermarkBlocks = 0
	case c.WatermarkBlocks == 0:
		c.WatermarkBlocks = pool.NumBlocks / 100
	}
	return c
}

// Scheduler runs many requests together, one step at a time, deterministically: each step
// first serves the running sequences in admission order (one decode token each, or the
// next prefill chunk), then admits waiting requests first come first served (except that
// a request whose prompt begins with blocks a running sequence is computing waits for them:
// awaitsPrefix), within a per-step token budget, while the pool can hand out — beyond what
// it already owes the running sequences, and beyond a watermark — every block a request is
// promised: the rest of its prompt after the prefix hit (whose cached blocks are reused, so
// they count as neither needed nor available), the slot of its first generated token, and
// the first tokens of its n-1 forks. Decode growth after that is not promised: the
// watermark absorbs it, and when a running sequence cannot get its next block anyway, the
// most recently admitted sequence is preempted: its blocks are freed and it waits again
// with its tokens so far, to be recomputed (bit-identically) later. All rows of a step go
// through one batched forward pass, so every weight matrix is read once per step.
type Scheduler struct {
	e        *Engine
	cfg      SchedulerConfig
	requests []*request
	waiting  queue       // front first; preempted sequences go to the front
	running  []*sequence // in admission order
	ended    []int       // requests that have ended since the last call of Ended
	clock    int64
	stats    Stats
	out      []Token     // tokens released during the current Step, in order
	prompts  []PromptRow // prompt rows delivered during the current Step, in order
	logits   []float32   // with ReuseLogits: the steps' logits (see SchedulerConfig.ReuseLogits)
}

// Stats are the scheduler's running totals.
type Stats struct {
	Steps          int     `json:"steps"`
	RowsMean       float64 `json:"batch_tokens_mean"` // tokens (rows) per step
	RowsMax        int     `json:"batch_tokens_max"`
	SequencesMean  float64 `json:"batch_sequences_mean"` // sequences per step
	SequencesMax   int     `json:"batch_sequences_max"`
	Preemptions    int     `json:"preemptions"`
	CheckedTokens  int64   `json:"checked_tokens"` // tokens released after Request.Check found their logits bit-identical
	PrefillTokens  int64   `json:"prefill_tokens"` // prompt (and recomputed) tokens run
	DecodeTokens   int64   `json:"decode_tokens"`  // single-token decode rows run
	ReplayTokens   int64   `json:"replay_tokens"`  // cached prompt positions recomputed for their logits (Request.PromptLogits)
	PeakBlocksUsed int     `json:"peak_blocks_used"`
	// PeakGroupBlocksUsed is, per cache group, the most blocks in use at the end of a step
	// (a pool with cache groups only).
	PeakGroupBlocksUsed []int `json:"peak_group_blocks_used,omitempty"`
	rows, seqs          int64
}

// request is the scheduler's state of one Request.
type request struct {
	id          int
	req         Request
	seqs        []*sequence // the root first, then its forks
	submitted   time.Time
	firstLogits time.Time
	finished    time.Time
	prefixHit   int
	admitted    bool
	preemptions int
	err         error
	promptNext  int         // with PromptLogits: the next prompt position whose row to deliver
	heldRows    []PromptRow // with PromptLogits and Check: rows waiting for their check
}

// sequence is one continuation of a request.
type sequence struct {
	r       *request
	idx     int
	state   State
	kv      *kvcache.Sequence // nil unless running
	tokens  []int             // prompt + generated: what the sequence is, whatever the cache holds
	output  []int
	text    []byte // the output's bytes, for stop strings
	cut     int    // length of text before a matched stop string (-1: none)
	stop    string
	sampler *Sampler
	check   Verifier[shownToken] // with Request.Check: the tokens waiting for their check
	shown   int                  // outputs released to the caller (with Check, only verified ones)
	shownAt int                  // bytes of text those outputs end at
	stamp   int64                // admission order
	queued  bool                 // in the waiting line
	ticket  uint64               // the ticket of its place in the waiting line (queue)
	// replay..replayEnd are the cached prompt positions still to recompute for their logits
	// (Request.PromptLogits), set at each admission.
	replay, replayEnd int
}

// shownToken is a generated token and where its text ends in its sequence's text.
type shownToken struct {
	tok     Token
	textEnd int
}

// NewScheduler returns a scheduler over the engine's model and pool.
func (e *Engine) NewScheduler(cfg SchedulerConfig) *Scheduler {
	return &Scheduler{e: e, cfg: cfg.withDefaults(e.pool.Config())}
}

// Add submits a request and returns its id. A request that can never run (see
// Engine.Validate) is rejected with an error wrapping ErrRejected.
func (s *Scheduler) Add(req Request) (int, error) {
	if err := s.e.Validate(req); err != nil {
		return -1, err
	}
	r := &request{id: len(s.requests), req: req, submitted: time.Now()}
	root := &sequence{r: r, tokens: slices.Clone(req.Prompt), cut: -1}
	root.sampler = NewSampler(req.Sampling)
	r.seqs = []*sequence{root}
	s.requests = append(s.requests, r)
	s.waiting.PushBack(root)
	return r.id, nil
}

// Cancel ends requests at once: their sequences stop and their blocks are released (full
// blocks stay cached for prefix hits). Tokens still waiting for their check (Request.Check)
// are discarded unverified: they are never emitted, and Result does not count them.
// Cancelling a finished or unknown request does nothing. It takes time proportional to the
// cancelled requests' sequences and the running list (once for all of ids), never to the
// waiting line.
func (s *Scheduler) Cancel(ids ...int) {
	fromRunning := false
	for _, id := range ids {
		if id < 0 || id >= len(s.requests) || s.requests[id] == nil {
			continue
		}
		for _, q := range s.requests[id].seqs {
			if q.state != Finished {
				q.check.Discard()
				fromRunning = s.end(q, "cancelled") || fromRunning
			}
		}
	}
	if fromRunning {
		s.running = slices.DeleteFunc(s.running, func(x *sequence) bool { return x.state == Finished })
	}
}

// Done reports whether every request has finished.
func (s *Scheduler) Done() bool { return s.waiting.Len() == 0 && len(s.running) == 0 }

// Ended returns the ids of the requests that have ended (every continuation finished, for
// whatever reason: a stop, an error, Cancel) since the last call, in the order they ended.
// A server learns from it which requests to answer without looking at all of them.
func (s *Scheduler) Ended() []int {
	ids := s.ended
	s.ended = nil
	return ids
}

// State reports the state of continuation seq of request id (Finished once released).
func (s *Scheduler) State(id, seq int) State {
	if r := s.requests[id]; r != nil {
		return r.seqs[seq].state
	}
	return Finished
}

// Stats returns the scheduler's totals.
func (s *Scheduler) Stats() Stats { return s.stats }

// Result returns what request id has emitted so far (complete once it has finished): with
// Request.Check, only tokens whose check has passed.
func (s *Scheduler) Result(id int) Result {
	r := s.requests[id]
	if r == nil {
		return Result{}
	}
	res := Result{PromptTokens: len(r.req.Prompt), PrefixHitTokens: r.prefixHit, Preemptions: r.preemptions}
	for _, q := range r.seqs {
		res.Outputs = append(res.Outputs, slices.Clone(q.output[:q.shown]))
		res.Texts = append(res.Texts, q.textSoFar())
		res.StopReasons = append(res.StopReasons, q.stop)
	}
	if !r.firstLogits.IsZero() {
		res.Prefill = r.firstLogits.Sub(r.submitted)
		end := r.finished
		if end.IsZero() {
			end = time.Now()
		}
		res.Decode = end.Sub(r.firstLogits)
	}
	return res
}

// Text returns the text continuation seq of request id has released so far, cut before a
// matched stop string: Result(id).Texts[seq] without copying the other continuations ("" once
// released).
func (s *Scheduler) Text(id, seq int) string {
	if r := s.requests[id]; r != nil {
		return r.seqs[seq].textSoFar()
	}
	return ""
}

// textSoFar is the text of the sequence's outputs released so far, cut before a matched stop
// string once the output that matched it is released.
func (q *sequence) textSoFar() string {
	text := q.text[:q.shownAt]
	if q.cut >= 0 && q.shown == len(q.output) {
		text = text[:q.cut]
	}
	return string(text)
}

// Err returns the error that ended request id, if any: a cache too small for its sequence
// even after preempting everything else (a *CacheFullError), a failed check (a *CheckError), or logits that
// are not finite (ErrNonFinite).
func (s *Scheduler) Err(id int) error {
	if r := s.requests[id]; r != nil {
		return r.err
	}
	return nil
}

// Release forgets a finished request, so that a long-running scheduler (a server) does not
// keep every request's outputs forever. Its id stays taken; Result, State and Err of a
// released request return zero values. Releasing an unfinished request does nothing and
// returns false.
func (s *Scheduler) Release(id int) bool {
	if id < 0 || id >= len(s.requests) || s.requests[id] == nil {
		return false
	}
	for _, q := range s.requests[id].seqs {
		if q.state != Finished {
			return false
		}
	}
	s.requests[id] = nil
	return true
}

// scheduled is one sequence's share of a step: n tokens starting at its next position.
type scheduled struct {
	q      *sequence
	n      int
	replay int // cached prompt positions recomputed first, from q.replay
}

// Step runs one scheduling step and one batched forward pass, and returns the tokens
// released in it, in order. Without Request.Check a token is released as soon as it is
// sampled; with it, only once the logits it was sampled from have been recomputed by the
// cache-free reference and found bit-identical (see Verifier): a sequence's tokens are
// held and released a window at a time, and at its end. It returns an error for a broken
// model (or a reference pass that fails); requests that cannot continue, and requests
// whose check fails, are finished with an error instead (see Err).
func (s *Scheduler) Step() ([]Token, error) {
	s.out, s.prompts = nil, nil
	if s.Done() {
		return nil, nil
	}
	plan := s.schedule()
	if len(plan) == 0 && s.Done() {
		return s.takeOut(), nil // the last requests failed while scheduling
	}
	if len(plan) == 0 {
		return s.takeOut(), fmt.Errorf("engine: nothing can run: %d sequences waiting, %d running, %d of %d blocks available",
			s.waiting.Len(), len(s.running), s.e.pool.Available(), s.e.pool.Config().NumBlocks)
	}
	spans := make([]span, len(plan))
	rows := 0
	for i, p := range plan {
		spans[i] = span{kv: p.q.kv, n: p.n, replay: p.q.replay, replayN: p.replay, rows: wantsRows(p.q)}
		rows += p.n + p.replay
		s.stats.ReplayTokens += int64(p.replay)
		if start := p.q.kv.Computed(); p.n == 1 && len(p.q.output) > 0 && start == p.q.kv.Len()-1 {
			s.stats.DecodeTokens++
		} else {
			s.stats.PrefillTokens += int64(p.n)
		}
	}
	// schedule() reserved every span's slots already, deciding whom to preempt on the way.
	logits, err := s.e.compute(spans, false, s.logitsBuffer(plan))
	if err != nil {
		return s.takeOut(), err
	}
	s.recordBatch(rows, len(plan))
	last := s.deliverRows(plan, spans, logits)
	st := s.e.pool.Stats()
	s.stats.PeakBlocksUsed = max(s.stats.PeakBlocksUsed, st.BlocksUsed)
	if st.Groups != nil && s.stats.PeakGroupBlocksUsed == nil {
		s.stats.PeakGroupBlocksUsed = make([]int, len(st.Groups))
	}
	for g, gs := range st.Groups {
		s.stats.PeakGroupBlocksUsed[g] = max(s.stats.PeakGroupBlocksUsed[g], gs.BlocksUsed)
	}
	for i, p := range plan {
		q := p.q
		if last[i] == nil || q.state == Finished { // not at its last token, or its request failed earlier in this step
			continue
		}
		if q.r.req.ScoreOnly && len(q.output) == 0 {
			s.scored(q)
			continue
		}
		for _, c := range s.forkIfFirst(q) {
			if c.state == Finished {
				continue
			}
			if err := s.advance(c, last[i]); err != nil {
				return s.takeOut(), err
			}
		}
	}
	return s.takeOut(), nil
}

// takeOut returns the tokens released so far in this step and forgets them.
func (s *Scheduler) takeOut() []Token {
	out := s.out
	s.out = nil
	return out
}

// schedule decides this step's work, reserving cache slots (and preempting) as it goes;
// Step then computes it (step.go).
func (s *Scheduler) schedule() []scheduled {
	pool := s.e.pool
	budget := s.cfg.MaxBatchTokens
	var plan []scheduled
	for i := 0; i < len(s.running) && budget > 0; i++ {
		q := s.running[i]
		rp, n := s.share(q, budget)
		for {
			_, err := s.e.reserve([]span{{kv: q.kv, n: n}})
			if err == nil {
				plan = append(plan, scheduled{q, n, rp})
				budget -= n + rp
				break
			}
			victim := s.running[len(s.running)-1]
			if victim == q && len(s.running) == 1 {
				s.fail(q, &CacheFullError{Tokens: len(q.tokens), Blocks: pool.Config().NumBlocks, Err: err})
				break
			}
			s.preempt(victim)
			if victim == q {
				break
			}
		}
		if i < len(s.running) && s.running[i] != q {
			i-- // q left the running list; the next sequence moved into slot i
		}
	}
	watermark := s.cfg.WatermarkBlocks
	if len(s.running) == 0 {
		watermark = 0 // an empty engine admits whatever fits
	}
	cfg := pool.Config()
	// Blocks that admitted sequences will still need — the rest of their prompts, the slot
	// of their first generated token, their forks — are spoken for: admission must not hand
	// them out again.
	promised := 0
	for _, q := range s.running {
		promised += s.promised(q, len(q.kv.Table()))
	}
	// A request whose prompt shares blocks that a running sequence is computing waits for
	// them (awaitsPrefix) instead of computing copies beside it; those behind it in line may
	// go ahead. They leave the line after the loop (removing from it inside All could
	// compact the slice being walked).
	var admitted []*sequence
	defer func() {
		for _, q := range admitted {
			s.waiting.Remove(q)
		}
	}()
	deferred := 0
	for q := range s.waiting.All() {
		if budget <= 0 || len(s.running) >= s.cfg.MaxSequences {
			break
		}
		if deferred < maxAwaiting && s.awaitsPrefix(q) {
			deferred++
			continue
		}
		hit, pinned := pool.PrefixHit(q.tokens, q.r.req.CacheSalt)
		// The hit's blocks are reused, not allocated; those of them that are cached and
		// evictable leave the Available() count when the sequence pins them.
		need := s.promised(q, hit/cfg.BlockSize)
		if len(s.running) == 0 {
			// Alone, a request needs only its prompt to start: forks and growth that do
			// not fit are served by preempting its own continuations.
			need = min(need, s.prompt(q, hit/cfg.BlockSize))
		}
		if pool.Available()-pinned-promised < need+watermark {
			break
		}
		kv := pool.AddSequence(q.tokens, q.r.req.CacheSalt)
		q.kv = kv
		s.startReplay(q)
		rp, n := s.share(q, budget)
		if _, err := s.e.reserve([]span{{kv: kv, n: n}}); err != nil {
			pool.Free(kv) // the prefix hit took cached blocks out of the evictable set
			q.kv = nil
			break
		}
		admitted = append(admitted, q)
		q.state = Running
		s.clock++
		q.stamp = s.clock
		s.running = append(s.running, q)
		if !q.r.admitted {
			q.r.admitted = true
			q.r.prefixHit = kv.Computed()
		}
		s.observe(SeqAdmitted, q)
		plan = append(plan, scheduled{q, n, rp})
		budget -= n + rp
		promised += s.promised(q, len(kv.Table()))
	}
	return plan
}

// maxAwaiting is the most waiting requests one step passes over because they await a
// prefix being computed (awaitsPrefix): past it, the line waits as it is, so that a step's
// scan stays short however many requests share one prompt.
const maxAwaiting = 64

// awaitsPrefix reports whether q should wait for a running sequence of its cache salt that
// is computing prompt blocks q's prompt also begins with, beyond the prefix the cache
// already holds for q: requests that arrive together with one system prompt would
// otherwise each compute a copy of it in the same step (16 requests sharing 1,024 tokens,
// a budget of 2,048 tokens: the second request's copy doubled the first step). Once those
// blocks are computed they are q's prefix hit.
func (s *Scheduler) awaitsPrefix(q *sequence) bool {
	bs := s.e.pool.Config().BlockSize
	hit := -1 // q's cached prefix, looked up only when needed
	for _, r := range s.running {
		if r.r.req.CacheSalt != q.r.req.CacheSalt || r.kv.Computed() >= len(r.tokens)-1 {
			continue // another salt's blocks, or nothing left to compute but decode rows
		}
		common := 0
		for common < len(q.tokens)-1 && common < len(r.tokens) && q.tokens[common] == r.tokens[common] {
			common++
		}
		shared := common / bs * bs // whole blocks, short of q's last token (it is always computed)
		if shared <= r.kv.Computed() {
			continue // r has computed those: they are cached already, or never will be
		}
		if hit < 0 {
			hit = s.e.pool.CachedPrefix(q.tokens, q.r.req.CacheSalt)
		}
		if shared > hit {
			return true
		}
	}
	return false
}

// chunkSize is the most prompt tokens of one sequence a step computes: the configured chunk,
// and with sliding-window attention at most the (smallest) window, so that a long prompt (or
// a preempted sequence being recomputed) is computed window by window, releasing the blocks
// it slides past in between, and a sliding group never needs more than about two windows of
// blocks at once.
func (s *Scheduler) chunkSize() int {
	if w := s.e.slideWindow(); w > 0 {
		return min(s.cfg.ChunkSize, w)
	}
	return s.cfg.ChunkSize
}

// promised is how many more blocks sequence q needs, beyond the blocks of table, to compute
// its tokens and, before its first generated token, the slot of that token — and, for a
// request's first sequence before its first token, the first tokens of the N-1 forks made
// from it (each fork copies the shared last block on its first write, or takes a new block
// when that block is full). Decode growth after the first token is not promised: the
// watermark (SchedulerConfig.WatermarkBlocks, 1% of the pool by default) absorbs it, and
// when that is not enough the most recently admitted sequence is preempted.
func (s *Scheduler) promised(q *sequence, held int) int {
	end := len(q.tokens)
	if len(q.output) == 0 {
		end++
	}
	need := s.groupsNeed(held, end)
	if q.idx == 0 && len(q.r.seqs) == 1 && len(q.output) == 0 {
		// Each fork's first write copies (or adds) one block in every cache group.
		need += (max(q.r.req.N, 1) - 1) * s.e.pool.Groups()
	}
	return need
}

// prompt is how many more blocks q's whole prompt spans in all its tables, beyond the held
// entries of each (no window counted: it only bounds promised from above).
func (s *Scheduler) prompt(q *sequence, held int) int {
	return s.e.pool.Groups() * max(0, s.e.pool.Config().BlocksFor(len(q.tokens))-held)
}

// groupsNeed sums over the cache groups the blocks a sequence whose tables have held
// entries needs to compute up to end tokens: the whole span in a full group; in a sliding
// group, whose blocks outside the window are released after every chunk, at most the window
// and one chunk.
func (s *Scheduler) groupsNeed(held, end int) int {
	cfg := s.e.pool.Config()
	total := 0
	for g := range s.e.pool.Groups() {
		need := cfg.BlocksFor(end) - held
		if w := s.e.groupWindow(g); w > 0 {
			need = min(need, cfg.BlocksFor(w+s.chunkSize())+1)
		}
		total += max(need, 0)
	}
	return total
}

// preempt frees a running sequence's blocks and puts it at the front of the waiting queue
// with all its tokens; it is recomputed when readmitted.
func (s *Scheduler) preempt(q *sequence) {
	s.observe(SeqPreempted, q)
	s.e.pool.Free(q.kv)
	q.kv = nil
	q.state = Preempted
	s.running = slices.DeleteFunc(s.running, func(x *sequence) bool { return x == q })
	s.waiting.PushFront(q)
	q.r.preemptions++
	s.stats.Preemptions++
}

// fail finishes a sequence's whole request with an error. Tokens of its continuations that
// still wait for their check are flushed first: verified, and released if they pass, so that
// what the request produced before the failure is delivered (and nothing unverified).
func (s *Scheduler) fail(q *sequence, err error) {
	q.r.err = err
	for _, c := range q.r.seqs {
		if c.state == Finished {
			continue
		}
		if c.check.Held() > 0 {
			passed, _ := c.check.Verify(s.e, c.tokens) // the request has failed already: a further error adds nothing
			for _, st := range passed {
				s.release(c, st)
			}
			s.stats.CheckedTokens += int64(len(passed))
		}
		s.finish(c, "error")
	}
}

// finish ends a sequence, releases its blocks and takes it out of its list.
func (s *Scheduler) finish(q *sequence, reason string) {
	if s.end(q, reason) {
		s.running = slices.DeleteFunc(s.running, func(x *sequence) bool { return x == q })
	}
}

// end ends a sequence and releases its blocks; it takes a waiting sequence out of the line
// (in O(1)) but leaves a running one in the running list, and reports whether it was there.
// The caller removes it (finish one at a time, Cancel many at once).
func (s *Scheduler) end(q *sequence, reason string) (running bool) {
	running = q.state == Running
	if q.queued {
		s.waiting.Remove(q)
	}
	if q.kv != nil {
		s.e.pool.Free(q.kv)
		q.kv = nil
	}
	q.state = Finished
	q.stop = reason
	r := q.r
	for _, c := range r.seqs {
		if c.state != Finished {
			return running
		}
	}
	r.finished = time.Now()
	s.ended = append(s.ended, r.id)
	return running
}

// forkIfFirst returns the sequences that sample from q's new logits: q alone, or — the
// first time a request with N > 1 has logits — q and N-1 forks sharing all its blocks.
func (s *Scheduler) forkIfFirst(q *sequence) []*sequence {
	r := q.r
	if r.firstLogits.IsZero() {
		r.firstLogits = time.Now()
	}
	if q.idx != 0 || len(r.seqs) > 1 || r.req.N <= 1 || len(q.output) > 0 {
		return []*sequence{q}
	}
	out := []*sequence{q}
	for i := 1; i < r.req.N; i++ {
		p := r.req.Sampling
		p.Seed = logit.ContinuationSeed(p.Seed, i)
		c := &sequence{r: r, idx: i, state: Running, kv: s.e.pool.Fork(q.kv), tokens: slices.Clone(q.tokens), cut: -1, sampler: NewSampler(p)}
		s.clock++
		c.stamp = s.clock
		r.seqs = append(r.seqs, c)
		s.running = append(s.running, c)
		s.observe(SeqForked, c)
		out = append(out, c)
	}
	return out
}

// logitsBuffer is where the logits of a step of plan go: the scheduler's own array with
// ReuseLogits, unless a request of the plan checks its tokens (its Verifier holds logits
// until a later step); nil (a fresh array) otherwise.
func (s *Scheduler) logitsBuffer(plan []scheduled) *[]float32 {
	if !s.cfg.ReuseLogits {
		return nil
	}
	for _, p := range plan {
		if p.q.r.req.Check {
			return nil
		}
	}
	return &s.logits
}

// advance samples q's next token from logits and either appends it (to be computed next
// step) or finishes the sequence. The token is released at once, or, with Request.Check,
// held until its window is verified (at the latest when the sequence ends).
func (s *Scheduler) advance(q *sequence, logits []float32) error {
	r := q.r
	pos := len(q.tokens)
	if err := checkFinite(logits, q.idx, len(q.output), pos-1); err != nil {
		s.fail(q, err)
		return nil
	}
	tok := q.sampler.Sample(logits)
	t := Token{Request: r.id, Seq: q.idx, Step: len(q.output), Pos: pos, ID: tok, Logits: logits}
	q.output = append(q.output, tok)
	q.text = append(q.text, s.e.model.Tokenizer.Piece(tok)...)
	reason := s.stopReason(q, tok)
	if reason == "" {
		q.tokens = append(q.tokens, tok)
		q.kv.Append(tok)
	} else {
		t.Final, t.StopReason = true, reason
	}
	st := shownToken{tok: t, textEnd: len(q.text)}
	if !r.req.Check {
		s.release(q, st)
	} else {
		q.check.Hold(q.idx, t.Step, pos-1, logits, st)
		if reason != "" || q.check.Due() {
			if err := s.verify(q); err != nil {
				return err
			}
		}
	}
	if reason != "" && q.state != Finished { // a failed check has finished it already
		s.finish(q, reason)
	}
	return nil
}

// release hands a token to the caller of Step.
func (s *Scheduler) release(q *sequence, st shownToken) {
	s.out = append(s.out, st.tok)
	q.shown++
	q.shownAt = st.textEnd
}

// verify checks q's held tokens and releases those that pass. A failed check ends q's
// request (its other continuations' held tokens are verified and released first, see
// fail); any other error is returned.
func (s *Scheduler) verify(q *sequence) error {
	passed, err := q.check.Verify(s.e, q.tokens)
	for _, st := range passed {
		s.release(q, st)
	}
	s.stats.CheckedTokens += int64(len(passed))
	if err != nil {
		return s.checkFailed(q, err)
	}
	return nil
}

// checkFailed ends the request of q with a failed check (Request.Check). A *CheckError is the request's
// own failure (see Err) and does not stop the other requests; any other error is returned.
func (s *Scheduler) checkFailed(q *sequence, err error) error {
	var ce *CheckError
	if errors.As(err, &ce) {
		s.fail(q, err)
		return nil
	}
	return err
}

// stopReason says why q stops after emitting tok, or "" to go on.
func (s *Scheduler) stopReason(q *sequence, tok int) string {
	req := q.r.req
	switch {
	case !req.IgnoreEOS && s.e.model.Tokenizer.IsEOG(tok):
		return "eos"
	case slices.Contains(req.StopTokens, tok):
		return "stop"
	}
	for _, stop := range req.StopStrings {
		if stop == "" {
			continue
		}
		// Only the tail can hold a new match: search the last len(stop)+len(piece) bytes.
		from := max(0, len(q.text)-len(stop)-len(s.e.model.Tokenizer.Piece(tok)))
		if i := strings.Index(string(q.text[from:]), stop); i >= 0 {
			q.cut = from + i
			return "stop"
		}
	}
	switch {
	case req.MaxTokens >= 0 && len(q.output) >= req.MaxTokens:
		return "length"
	case len(q.tokens)+1 >= s.e.context:
		return "context"
	}
	return ""
}

func (s *Scheduler) recordBatch(rows, seqs int) {
	st := &s.stats
	st.Steps++
	st.rows += int64(rows)
	st.seqs += int64(seqs)
	st.RowsMax = max(st.RowsMax, rows)
	st.SequencesMax = max(st.SequencesMax, seqs)
	st.RowsMean = float64(st.rows) / float64(st.Steps)
	st.SequencesMean = float64(st.seqs) / float64(st.Steps)
}

// RunAll steps until every request has finished, passing each token to emit in order. An
// error from emit or from a step stops it.
func (s *Scheduler) RunAll(emit func(Token) error) error {
	for !s.Done() {
		if err := s.EmitStep(emit); err != nil {
			return err
		}
	}
	return nil
}

// EmitStep runs one Step and passes its tokens to emit in order, even when the step
// failed after producing them. It returns emit's first error, or else the step's.
func (s *Scheduler) EmitStep(emit func(Token) error) error {
	toks, err := s.Step()
	for _, t := range toks {
		if eerr := emit(t); eerr != nil {
			return eerr
		}
	}
	return err
}
