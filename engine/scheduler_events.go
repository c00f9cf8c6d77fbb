package engine

// SchedulerEventKind says what the scheduler did with a sequence.
type SchedulerEventKind uint8

// What the scheduler reports to SchedulerConfig.Observer. The cache's own events (prefix
// hits, allocations, releases, ...) come from kvcache.Pool.SetObserver; these say why.
const (
	// SeqAdmitted: a waiting sequence got a cache sequence and runs from this step on (its
	// prompt's cached prefix came with it, as PrefixHit events just before).
	SeqAdmitted SchedulerEventKind = iota
	// SeqPreempted: a running sequence lost its blocks because another needed them; it
	// waits again with all its tokens and is recomputed when readmitted (the Released
	// events of its blocks follow).
	SeqPreempted
	// SeqForked: a request with N > 1 continuations forked its first sequence after the
	// prompt, once per further continuation (the Forked events of the shared blocks just
	// before).
	SeqForked
)

var schedulerEventNames = [...]string{"admit", "preempt", "fork_seq"}

// String names the kind ("admit", "preempt", "fork_seq"), as JSON shows it.
func (k SchedulerEventKind) String() string { return schedulerEventNames[k] }

// MarshalText spells the kind by its name.
func (k SchedulerEventKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// SchedulerEvent is one admission, preemption or fork.
type SchedulerEvent struct {
	Kind     SchedulerEventKind `json:"kind"`
	Request  int                `json:"request"`  // the request's id (from Scheduler.Add)
	Choice   int                `json:"choice"`   // the continuation within the request (0..N-1)
	Seq      int                `json:"seq"`      // the cache sequence (kvcache.Sequence.ID) admitted or preempted
	Tokens   int                `json:"tokens"`   // the sequence's tokens: prompt and generated so far
	Computed int                `json:"computed"` // tokens whose K/V the cache holds: the reused prefix on admission, what is lost on preemption
	Blocks   int                `json:"blocks"`   // blocks in its table (holes included)
}

// observe reports q's admission, preemption or fork to the observer, if any. q must hold its
// cache sequence.
func (s *Scheduler) observe(kind SchedulerEventKind, q *sequence) {
	if s.cfg.Observer == nil {
		return
	}
	s.cfg.Observer(SchedulerEvent{Kind: kind, Request: q.r.id, Choice: q.idx, Seq: q.kv.ID(),
		Tokens: q.kv.Len(), Computed: q.kv.Computed(), Blocks: len(q.kv.Table())})
}
