package server

import (
	"context"
	"net/http"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
)

// The cache you can watch: the server serves cacheview's page at / and its endpoints
// (GET /v1/cache, GET /v1/cache/events, GET /v1/plan). The pool and the scheduler belong
// to the engine loop, so:
//   - their events reach the view through observers that run on the loop and hand each
//     event to a cacheview.Hub, which never waits for a viewer (a slow one loses events);
//   - a snapshot is an op on the loop (Server.do), taken between two steps.

// cacheView is the server's side of the view. Everything but hub is owned by the engine
// loop.
type cacheView struct {
	hub *cacheview.Hub
	// track follows the requests for the requests panel, from the same events (history.go).
	track *cacheview.Requests
	// requests maps a live cache sequence to its engine request and continuation, from the
	// scheduler's admissions and forks; entries of ended sequences are dropped at the next
	// snapshot.
	requests map[int][2]int
}

// newCacheView attaches the view to e's pool and to the schedulers made with opts.
func newCacheView(e *engine.Engine, opts *Options) *cacheView {
	v := &cacheView{hub: cacheview.NewHubHistory(0, historySize(opts.ViewHistory, cacheview.DefaultHistory)),
		track: cacheview.NewRequests(historySize(opts.ViewRequests, cacheview.DefaultRequestHistory)), requests: map[int][2]int{}}
	e.Pool().SetObserver(func(ev kvcache.Event) {
		out := cacheview.PoolEvent(ev)
		v.track.Observe(&out)
		v.hub.Publish(out)
	})
	next := opts.Scheduler.Observer
	opts.Scheduler.Observer = func(ev engine.SchedulerEvent) {
		out := cacheview.SchedulerEvent(ev)
		v.track.Observe(&out) // the request's number replaces the scheduler's id
		if ev.Kind != engine.SeqPreempted {
			v.requests[ev.Seq] = [2]int{out.Request, ev.Choice}
		}
		v.hub.Publish(out)
		if next != nil {
			next(ev)
		}
	}
	return v
}

// mountCacheView registers the page and its endpoints on mux.
func (s *Server) mountCacheView(mux *http.ServeMux) {
	m := s.eng.Model()
	cacheview.Mount(mux, cacheview.Source{View: s.cacheSnapshot, Hub: s.view.hub},
		cacheview.Planner{This: &cacheview.PlanModel{Name: s.model, Shape: m.Config.PlanShape(), WeightsBytes: m.Weights.Bytes()}})
}

// cacheSnapshot copies the pool's state on the engine loop, between steps, and describes it
// (token texts and all) off the loop, so that a viewer costs the engine only the copy.
func (s *Server) cacheSnapshot(ctx context.Context) (cacheview.View, error) {
	var snap kvcache.Snapshot
	var st engine.Stats
	var published int64
	requests := map[int][2]int{}
	var reqs []cacheview.Request
	err := s.do(ctx, func() {
		snap, published = s.eng.Pool().Snapshot(), s.view.hub.Published()
		reqs = s.view.track.Snapshot()
		st = combineStats(s.past, s.sched.Stats())
		live := map[int]bool{}
		for _, q := range snap.Sequences {
			live[q.ID] = true
			if rc, ok := s.view.requests[q.ID]; ok {
				requests[q.ID] = rc
			}
		}
		for id := range s.view.requests {
			if !live[id] {
				delete(s.view.requests, id) // the sequence has ended
			}
		}
	})
	if err != nil {
		return cacheview.View{}, err
	}
	v := cacheview.Build("serve", s.model, s.eng, snap, published)
	v.Engine = &st
	v.Requests = reqs
	v.History = &cacheview.History{Events: s.view.hub.History(), Requests: s.view.track.Keep()}
	for i := range v.Sequences {
		q := &v.Sequences[i]
		if rc, ok := requests[q.ID]; ok {
			req, choice := rc[0], rc[1]
			q.Request, q.Choice = &req, &choice
		}
	}
	return v, nil
}

// Inspect runs f with the server's engine on the engine loop, between steps, and waits for
// it (for tests and tools that read the pool's or the model's own accounts). f must be quick
// and must not keep the engine.
func (s *Server) Inspect(ctx context.Context, f func(e *engine.Engine)) error {
	return s.do(ctx, func() { f(s.eng) })
}
