package server

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kvref/kvref/engine"
)

// route says where the tokens of one engine request go.
type route struct {
	mb     *mailbox
	job    int  // index of the prompt within its HTTP request
	seqs   int  // continuations seen: 1 until the first token, then the request's N
	logits bool // the handler needs each token's logits (for logprobs)
}

// event is what the engine loop tells a handler: one generated token, or the end of one of
// its engine requests.
type event struct {
	job int // index of the prompt within the HTTP request

	// A token (done is false).
	tok    engine.Token
	last   bool   // tok ended its continuation
	reason string // why, when last: the engine's stop reason
	text   string // the continuation's final text (cut before a stop string), when last

	// The end of the request (done is true).
	done bool
	res  engine.Result
	err  error
}

// mailbox is a handler's inbox. The engine loop appends to it and never waits for the
// handler, so one slow client cannot stall the batch.
type mailbox struct {
	mu     sync.Mutex
	events []event
	ready  chan struct{} // holds a signal when events have arrived
}

func newMailbox() *mailbox { return &mailbox{ready: make(chan struct{}, 1)} }

func (m *mailbox) push(evs []event) {
	m.mu.Lock()
	m.events = append(m.events, evs...)
	m.mu.Unlock()
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

func (m *mailbox) take() []event {
	m.mu.Lock()
	defer m.mu.Unlock()
	evs := m.events
	m.events = nil
	return evs
}

// next waits for the mailbox's next events. It fails when ctx is done, or with ErrClosed
// when the engine loop has stopped and nothing is left to read.
func (s *Server) next(ctx context.Context, mb *mailbox) ([]event, error) {
	for {
		if evs := mb.take(); len(evs) > 0 {
			return evs, nil
		}
		select {
		case <-mb.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.stopped:
			if evs := mb.take(); len(evs) > 0 {
				return evs, nil
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
// (with their logits when logits is set).
func (s *Server) submit(ctx context.Context, reqs []engine.Request, mb *mailbox, logits bool) ([]int, error) {
	var ids []int
	var err error
	derr := s.do(ctx, func() {
		for j, req := range reqs {
			id, aerr := s.sched.Add(req)
			if aerr != nil {
				for _, id := range ids {
					s.sched.Cancel(id)
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
			s.routes[id] = &route{mb: mb, job: j, seqs: 1, logits: logits}
			s.active = append(s.active, id)
			ids = append(ids, id)
		}
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
	f := func() {
		for _, id := range ids {
			if r := s.routes[id]; r != nil && r.mb == mb {
				s.sched.Cancel(id)
				s.unroute(id)
				s.counter.Cancelled++
			}
		}
	}
	select {
	case s.ops <- f:
	case <-s.stopped:
	}
}

// unroute forgets request id's route.
func (s *Server) unroute(id int) {
	delete(s.routes, id)
	s.active = slices.DeleteFunc(s.active, func(x int) bool { return x == id })
}

// step runs one scheduler step and delivers its tokens, then the ends of the requests that
// finished. A failed --check ends only its own request (the scheduler reports it through
// Err); a failed step (a broken model) fails every request in the engine, since the
// scheduler's state after it is not to be trusted.
func (s *Server) step() {
	toks, err := s.sched.Step()
	for _, t := range toks {
		r := s.routes[t.Request]
		if r == nil {
			continue
		}
		r.seqs = max(r.seqs, t.Seq+1)
		if !r.logits {
			t.Logits = nil // a slow reader's mailbox must not hold vocabulary-sized rows it never reads
		}
		ev := event{job: r.job, tok: t}
		if t.Final {
			res := s.sched.Result(t.Request)
			ev.last, ev.reason, ev.text = true, t.StopReason, res.Texts[t.Seq]
		}
		s.pending[r.mb] = append(s.pending[r.mb], ev)
		s.counter.GeneratedTokens++
	}
	if err != nil {
		s.logf("engine step failed, failing %d requests: %v", len(s.active), err)
		s.failAll(fmt.Errorf("engine step failed: %w", err))
	}
	for _, id := range slices.Clone(s.active) {
		if s.finished(id) {
			r := s.routes[id]
			ev := event{job: r.job, done: true, res: s.sched.Result(id), err: s.sched.Err(id)}
			if ev.err != nil {
				s.counter.Failed++
			} else {
				s.counter.Finished++
			}
			s.pending[r.mb] = append(s.pending[r.mb], ev)
			s.unroute(id)
			s.sched.Release(id) // the scheduler forgets it; the server keeps nothing either
		}
	}
	s.flush()
}

// finished reports whether every continuation of request id has finished. Before its first
// token a request has one continuation; its forks appear with the first token.
func (s *Server) finished(id int) bool {
	for q := range s.routes[id].seqs {
		if s.sched.State(id, q) != engine.Finished {
			return false
		}
	}
	return true
}

// failAll cancels every request in the engine and ends it with err.
func (s *Server) failAll(err error) {
	for _, id := range slices.Clone(s.active) {
		r := s.routes[id]
		s.sched.Cancel(id)
		s.pending[r.mb] = append(s.pending[r.mb], event{job: r.job, done: true, res: s.sched.Result(id), err: err})
		s.counter.Failed++
		s.unroute(id)
		s.sched.Release(id)
	}
	s.flush()
}

// flush hands the events gathered in this step to their mailboxes, one push per mailbox so
// that a handler sees a token and the end of its continuation together.
func (s *Server) flush() {
	for mb, evs := range s.pending {
		mb.push(evs)
		delete(s.pending, mb)
	}
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
