package server

import (
	"time"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
)

// The view remembers: the hub keeps the last Options.ViewHistory events for the pages that
// open later, and the tracker the live requests and the last Options.ViewRequests finished
// ones, with the blocks each of their sequences held (the requests panel). The engine loop
// tells the tracker when a request is submitted and when it ends; the rest it learns from
// the pool's and the scheduler's events (cacheview.Requests.Observe), so that the panel, the
// log and the counters tell one story.

// historySize is a ring size from Options: 0 gives the default, a negative size none.
func historySize(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// viewSubmitted records request id, just added to the scheduler, and publishes its
// "submit" event. Only the engine loop calls it.
func (s *Server) viewSubmitted(id int, req engine.Request) {
	ev := s.view.track.Submit(id, cacheview.PromptStart(s.eng.Model().Tokenizer, req.Prompt), len(req.Prompt), req.N, time.Now())
	s.view.hub.Publish(ev)
}

// viewEnded records the end of request id, which the scheduler still holds (before Release),
// and publishes its "finish" event. Only the engine loop calls it.
func (s *Server) viewEnded(id int) {
	res := s.sched.Result(id)
	failure := ""
	if err := s.sched.Err(id); err != nil {
		failure = err.Error()
	}
	reasons := res.StopReasons
	if len(reasons) == 0 { // released already (a refused batch): nothing ran
		reasons = []string{"cancelled"}
	}
	if ev, ok := s.view.track.End(id, reasons, failure, time.Now()); ok {
		s.view.hub.Publish(ev)
	}
}
