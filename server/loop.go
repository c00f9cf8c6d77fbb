package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/kvref/kvref/engine"
)

// route says where the tokens of one engine request go.
type route struct {
	mb       *mailbox
	job      int // index of the prompt within its HTTP request
	n        int // its choices (continuations)
	logprobs int // top log-probabilities per token; -1: none
	promptK  int // top log-probabilities per prompt position (prompt rows); -1: none
}

// event is what the engine loop tells a handler: one generated token, or the end of one of
// its engine requests. It holds no logits: the loop computes the log-probabilities a
// handler asked for, so that a mailbox never keeps a step's logits alive.
type event struct {
	job int // index of the prompt within the HTTP request

	// A token (end is nil).
	seq    int        // the continuation
	id     int        // the token
	lp     *logprobOf // its log-probabilities, when the request asked for them
	last   bool       // the token ended its continuation
	reason string     // why, when last: the engine's stop reason
	text   string     // the continuation's final text (cut before a stop string), when last

	end *ending // the end of the prompt's engine request

	prompt *promptEntry // a prompt position's log-probabilities (the next in order)
}

// ending is the end of one engine request.
type ending struct {
	res engine.Result
	err error
}

// mailbox is a handler's inbox. The engine loop appends to it and never waits for the
// handler, so one slow client cannot stall the batch. A mailbox with a limit (a stream's)
// holds at most that many events: when a step would go past it, the loop cancels the
// handler's requests instead and the mailbox reports errSlow after its last events.
type mailbox struct {
	mu     sync.Mutex
	events []event
	limit  int       // most events held; 0: no limit
	err    *APIError // set once the mailbox overflowed
	ready  chan struct{}
	ids    []int // the handler's engine requests (set by submit)
}

func newMailbox(limit int) *mailbox { return &mailbox{limit: limit, ready: make(chan struct{}, 1)} }

// push appends evs, or reports false (and takes nothing) when that would pass the limit.
func (m *mailbox) push(evs []event) bool {
	m.mu.Lock()
	ok := m.err == nil && (m.limit == 0 || len(m.events)+len(evs) <= m.limit)
	if ok {
		m.events = append(m.events, evs...)
	}
	m.mu.Unlock()
	m.signal()
	return ok
}

// overflow marks the mailbox as cut off with err.
func (m *mailbox) overflow(err *APIError) {
	m.mu.Lock()
	m.err = err
	m.mu.Unlock()
	m.signal()
}

func (m *mailbox) signal() {
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// take returns the events that have arrived, or the mailbox's error once none are left.
func (m *mailbox) take() ([]event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	evs := m.events
	m.events = nil
	if len(evs) == 0 && m.err != nil {
		return nil, m.err
	}
	return evs, nil
}

// next waits for the mailbox's next events. It fails when ctx is done, with the mailbox's
// error when it overflowed, or with ErrClosed when the engine loop has stopped and nothing
// is left to read.
func (s *Server) next(ctx context.Context, mb *mailbox) ([]event, error) {
	for {
		if evs, err := mb.take(); len(evs) > 0 || err != nil {
			return evs, err
		}
		select {
		case <-mb.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.stopped:
			if evs, err := mb.take(); len(evs) > 0 || err != nil {
				return evs, err
			}
			return nil, ErrClosed
		}
	}
}

// do runs f on the engine loop and waits for it. It fails if ctx is done before the loop
// takes f, or with ErrClosed if the loop has stopped.
func (s *Server) do(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case s.ops <- func() { f(); close(done) }:
		<-done // the loop runs an op as soon as it receives it
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stopped:
		return ErrClosed
	}
}

// submit adds one engine request per prompt, all or none, with their tokens going to mb
// (with the top logprobs log-probabilities of each, unless logprobs is -1). A request that
// would take the engine past MaxQueue choices is refused with 429.
func (s *Server) submit(ctx context.Context, reqs []engine.Request, mb *mailbox, logprobs, promptK int) ([]int, error) {
	var ids []int
	var err error
	derr := s.do(ctx, func() {
		want := 0
		for _, req := range reqs {
			want += max(req.N, 1)
		}
		if s.choices+want > s.opts.MaxQueue {
			err = queueFull(want, s.choices, s.opts.MaxQueue)
			return
		}
		for j, req := range reqs {
			id, aerr := s.sched.Add(req)
			if aerr != nil {
				s.sched.Cancel(ids...)
				for _, id := range ids {
					s.sched.Release(id)
					s.unroute(id)
				}
				ids = nil
				if len(reqs) > 1 {
					aerr = fmt.Errorf("prompt %d: %w", j, aerr)
				}
				err = aerr
				return
			}
			s.added++
			s.routes[id] = &route{mb: mb, job: j, n: max(req.N, 1), logprobs: logprobs, promptK: promptK}
			s.viewSubmitted(id, req)
			s.choices += max(req.N, 1)
			ids = append(ids, id)
		}
		mb.ids = ids
		s.counter.Requests += int64(len(ids))
	})
	if derr != nil {
		return nil, derr
	}
	return ids, err
}

// cancel stops the requests ids that still deliver to mb, freeing their blocks at once. It
// does not wait for the loop to take the work when the loop has stopped.
func (s *Server) cancel(mb *mailbox, ids []int) {
	select {
	case s.ops <- func() { s.cancelRoutes(mb, ids) }:
	case <-s.stopped:
	}
}

// cancelRoutes cancels and forgets the requests ids that still deliver to mb, all in one
// pass of the scheduler; only the engine loop calls it.
func (s *Server) cancelRoutes(mb *mailbox, ids []int) {
	var mine []int
	for _, id := range ids {
		if r := s.routes[id]; r != nil && r.mb == mb {
			mine = append(mine, id)
		}
	}
	s.sched.Cancel(mine...)
	for _, id := range mine {
		s.unroute(id) // before Release: the view reads the request's end
		s.sched.Release(id)
		s.counter.Cancelled++
	}
}

// unroute forgets request id's route, and tells the view the request has ended.
func (s *Server) unroute(id int) {
	if r := s.routes[id]; r != nil {
		s.choices -= r.n
		delete(s.routes, id)
		s.viewEnded(id)
	}
}

// step runs one scheduler step and delivers its tokens, then the ends of the requests that
// finished in it. Its cost follows the step's work, not the number of requests queued: the
// scheduler says which requests ended. A failed --check ends only its own request (the
// scheduler reports it through Err); a failed step (a broken model) fails every request in
// the engine, since the scheduler's state after it is not to be trusted.
func (s *Server) step() {
	toks, err := s.sched.Step()
	for _, pr := range s.sched.PromptRows() { // before the tokens: a request's rows precede its first
		r := s.routes[pr.Request]
		if r == nil || r.promptK < 0 {
			continue
		}
		e := promptEntryOf(pr.Logits, pr.Next, r.promptK)
		s.pending[r.mb] = append(s.pending[r.mb], event{job: r.job, prompt: &e})
	}
	for _, t := range toks {
		r := s.routes[t.Request]
		if r == nil {
			continue
		}
		ev := event{job: r.job, seq: t.Seq, id: t.ID}
		if r.logprobs >= 0 {
			lp := logprobsOf(t.Logits, t.ID, r.logprobs)
			ev.lp = &lp
		}
		if t.Final {
			ev.last, ev.reason, ev.text = true, t.StopReason, s.sched.Text(t.Request, t.Seq)
		}
		s.pending[r.mb] = append(s.pending[r.mb], ev)
		s.counter.GeneratedTokens++
	}
	if err != nil {
		s.logf("engine step failed, failing %d requests: %v", len(s.routes), err)
		s.failAll(fmt.Errorf("engine step failed: %w", err))
	}
	for _, id := range s.sched.Ended() {
		r := s.routes[id]
		if r == nil { // cancelled (or failed) already
			s.sched.Release(id)
			continue
		}
		ev := event{job: r.job, end: &ending{res: s.sched.Result(id), err: s.sched.Err(id)}}
		if ev.end.err != nil {
			s.counter.Failed++
		} else {
			s.counter.Finished++
		}
		s.pending[r.mb] = append(s.pending[r.mb], ev)
		s.unroute(id)
		s.sched.Release(id) // the scheduler forgets it; the server keeps nothing either
	}
	s.flush()
}

// failAll cancels every request in the engine and ends it with err.
func (s *Server) failAll(err error) {
	ids := make([]int, 0, len(s.routes))
	for id := range s.routes {
		ids = append(ids, id)
	}
	s.sched.Cancel(ids...)
	for _, id := range ids {
		r := s.routes[id]
		s.pending[r.mb] = append(s.pending[r.mb], event{job: r.job, end: &ending{res: s.sched.Result(id), err: err}})
		s.counter.Failed++
		s.unroute(id)
		s.sched.Release(id)
	}
	s.sched.Ended() // all of them, answered above
	s.flush()
}

// flush hands the events gathered in this step to their mailboxes, one push per mailbox so
// that a handler sees a token and the end of its continuation together. A mailbox that
// cannot take them (a stream whose client stopped reading) has its requests cancelled.
func (s *Server) flush() {
	for mb, evs := range s.pending {
		delete(s.pending, mb)
		if mb.push(evs) {
			continue
		}
		s.cancelRoutes(mb, mb.ids)
		mb.overflow(slowClient(mb.limit, s.opts.StreamBacklog))
	}
}

// slowClient is the error that ends a stream whose client stopped reading: more than limit
// tokens waited for it.
func slowClient(limit, perChoice int) *APIError {
	return newError(http.StatusRequestTimeout, invalidRequest, "", "client_too_slow",
		"the client read too slowly: more than %d tokens were waiting to be sent (%d per choice, kvref serve --stream-backlog); the request was cancelled", limit, perChoice)
}

// retire replaces an idle scheduler that has served requests by a fresh one, folding its
// totals into the server's, so that its request table (released entries included) does not
// grow forever in a long-running server. The cache pool, and its prefix cache, stay.
func (s *Server) retire() {
	if s.added == 0 || len(s.routes) > 0 {
		return
	}
	s.past = combineStats(s.past, s.sched.Stats())
	s.sched = s.eng.NewScheduler(s.opts.Scheduler)
	s.added = 0
}

// busy marks the engine loop as working (since now) or idle, for /health.
func (s *Server) busy(working bool) {
	if working {
		s.busySince.Store(time.Now().UnixNano())
	} else {
		s.busySince.Store(0)
	}
}
