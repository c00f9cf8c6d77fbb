package golden

import (
	"fmt"
	"slices"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model"
)

// engineRun drives one scenario's events through a kvref engine and scheduler, keeping
// every request's steps.
type engineRun struct {
	sc      *Scenario
	eng     *engine.Engine
	sched   *engine.Scheduler
	cfg     runConfig
	reqs    []*runRequest
	byID    map[string]*runRequest
	bySched map[int]*runRequest
	hits    *hitTracker
	// preemptedAfterReclaim: a continuation was preempted after it had released blocks it
	// slid past.
	preemptedAfterReclaim bool
}

// runConfig says how to build the engine and what to keep.
type runConfig struct {
	cache      Cache
	context    int
	threads    int
	topK       int
	keepLogits bool
	// prepare returns the prompt ids and stop strings to submit for a request.
	prepare func(run *engineRun, r Request) (prompt []int, stop []string, err error)
}

// runRequest is one submitted request and what it produced so far.
type runRequest struct {
	spec        Request
	event       int
	prompt      []int
	stop        []string
	sched       int
	steps       [][]Step
	logits      [][][]float32
	cancelled   bool
	admitted    bool   // admitted for the first time (or cancelled while waiting)
	reclaimed   int    // of its prefix hit, the tokens a candidate need not reuse (hitTracker)
	preempted   []bool // per continuation: preempted after the last step
	promptSteps []Step // with PromptLogprobs: prompt tokens 1 to n−1, as delivered
}

func newEngineRun(m *model.Model, sc *Scenario, cfg runConfig) (*engineRun, error) {
	kType, vType, err := cfg.cache.Types()
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(m, engine.Config{
		Context: cfg.context, BlockSize: cfg.cache.BlockSize, CacheBlocks: cfg.cache.Blocks,
		Threads: cfg.threads, KType: kType, VType: vType,
	})
	if err != nil {
		return nil, fmt.Errorf("golden: scenario %s: %w", sc.Name, err)
	}
	hits := newHitTracker()
	hits.setGroups(eng.Pool().Config())
	eng.Pool().SetObserver(hits.observe)
	return &engineRun{
		sc: sc, eng: eng, cfg: cfg,
		sched:   eng.NewScheduler(engine.SchedulerConfig{MaxBatchTokens: cfg.cache.MaxBatchTokens, ChunkSize: cfg.cache.ChunkSize, ReuseLogits: true}),
		byID:    map[string]*runRequest{},
		bySched: map[int]*runRequest{},
		hits:    hits,
	}, nil
}

func (r *engineRun) close() { r.eng.Close() }

// output returns what continuation choice of request id has generated so far.
func (r *engineRun) output(id string, choice int) ([]int, error) {
	rr := r.byID[id]
	if rr == nil {
		return nil, fmt.Errorf("golden: no request %q has been submitted", id)
	}
	if choice >= len(rr.steps) {
		return nil, fmt.Errorf("golden: request %s has no continuation %d (yet)", id, choice)
	}
	out := make([]int, len(rr.steps[choice]))
	for i, s := range rr.steps[choice] {
		out[i] = s.ID
	}
	return out, nil
}

// run executes every event, then runs until every request has finished.
func (r *engineRun) run() error {
	for i, e := range r.sc.Events {
		var err error
		switch {
		case len(e.Submit) > 0:
			err = r.submit(i, e.Submit)
		case e.Wait != nil:
			err = r.wait(*e.Wait)
		case e.Cancel != "":
			rr := r.byID[e.Cancel]
			if !r.finished(rr) {
				rr.cancelled = true
			}
			r.sched.Cancel(rr.sched)
		case e.Steps > 0:
			for n := 0; n < e.Steps && !r.sched.Done(); n++ {
				if err = r.step(); err != nil {
					break
				}
			}
		case e.Flush:
			r.eng.Pool().Flush()
		}
		if err != nil {
			return fmt.Errorf("golden: scenario %s, event %d: %w", r.sc.Name, i, err)
		}
	}
	if err := r.wait(Wait{}); err != nil {
		return fmt.Errorf("golden: scenario %s: %w", r.sc.Name, err)
	}
	return nil
}

// submit adds a wave of requests before the next step.
func (r *engineRun) submit(event int, wave []Request) error {
	for _, req := range wave {
		prompt, stop, err := r.cfg.prepare(r, req)
		if err != nil {
			return fmt.Errorf("request %s: %w", req.ID, err)
		}
		id, err := r.sched.Add(engine.Request{
			Prompt: prompt, MaxTokens: req.MaxTokens, IgnoreEOS: req.IgnoreEOS, Sampling: req.sampling(),
			N: req.Choices(), StopStrings: stop, PromptLogits: req.PromptLogprobs, ScoreOnly: req.MaxTokens == 0,
		})
		if err != nil {
			return fmt.Errorf("request %s: %w", req.ID, err)
		}
		rr := &runRequest{spec: req, event: event, prompt: prompt, stop: stop, sched: id}
		r.reqs = append(r.reqs, rr)
		r.byID[req.ID] = rr
		r.bySched[id] = rr
	}
	return nil
}

// finished reports whether every continuation of the request has finished.
func (r *engineRun) finished(rr *runRequest) bool {
	reasons := r.sched.Result(rr.sched).StopReasons
	return !slices.Contains(reasons, "")
}

// wait steps until the condition holds.
func (r *engineRun) wait(w Wait) error {
	for !r.sched.Done() {
		if w.Request != "" {
			rr := r.byID[w.Request]
			if r.finished(rr) || w.Tokens > 0 && len(rr.steps) > 0 && len(rr.steps[0]) >= w.Tokens {
				return nil
			}
		}
		if err := r.step(); err != nil {
			return err
		}
	}
	for _, rr := range r.reqs {
		if err := r.sched.Err(rr.sched); err != nil {
			return fmt.Errorf("request %s: %w", rr.spec.ID, err)
		}
	}
	return nil
}

// step runs one scheduler step and records its tokens, which requests it admitted (and
// what part of their prefix hits is optional), and which continuations it preempted.
func (r *engineRun) step() error {
	r.hits.startStep()
	toks, err := r.sched.Step()
	if err == nil {
		err = r.noteAdmissions()
	}
	r.notePreemptions()
	for _, pr := range r.sched.PromptRows() {
		rr := r.bySched[pr.Request]
		if pr.Pos != len(rr.promptSteps) {
			return fmt.Errorf("request %s: the scheduler delivered prompt position %d after %d", rr.spec.ID, pr.Pos, len(rr.promptSteps))
		}
		rr.promptSteps = append(rr.promptSteps, newStep(pr.Logits, pr.Next, r.cfg.topK))
	}
	for _, t := range toks {
		rr := r.bySched[t.Request]
		for len(rr.steps) <= t.Seq {
			rr.steps = append(rr.steps, nil)
			rr.logits = append(rr.logits, nil)
		}
		if t.Step != len(rr.steps[t.Seq]) {
			return fmt.Errorf("request %s continuation %d: the scheduler reported step %d after %d steps", rr.spec.ID, t.Seq, t.Step, len(rr.steps[t.Seq]))
		}
		rr.steps[t.Seq] = append(rr.steps[t.Seq], newStep(t.Logits, t.ID, r.cfg.topK))
		if r.cfg.keepLogits {
			rr.logits[t.Seq] = append(rr.logits[t.Seq], slices.Clone(t.Logits))
		}
	}
	return err
}

// results returns the requests' outcomes as golden requests, checking that the steps the
// run recorded agree with the scheduler's results.
func (r *engineRun) results() ([]GoldenRequest, error) {
	var out []GoldenRequest
	for _, rr := range r.reqs {
		res := r.sched.Result(rr.sched)
		gr := GoldenRequest{
			ID: rr.spec.ID, Event: rr.event, PromptIDs: rr.prompt, MaxTokens: rr.spec.MaxTokens, N: rr.spec.Choices(),
			Sampling: rr.spec.sampling(), IgnoreEOS: rr.spec.IgnoreEOS, Stop: rr.stop, ExpectCache: rr.spec.ExpectCache,
			CachedTokens: res.PrefixHitTokens, ReclaimedTokens: rr.reclaimed, Preemptions: res.Preemptions, Cancelled: rr.cancelled,
		}
		for c, outIDs := range res.Outputs {
			var steps []Step
			if c < len(rr.steps) {
				steps = rr.steps[c]
			}
			if len(steps) != len(outIDs) {
				return nil, fmt.Errorf("golden: scenario %s request %s continuation %d: %d tokens recorded, the scheduler reports %d", r.sc.Name, rr.spec.ID, c, len(steps), len(outIDs))
			}
			for i, s := range steps {
				if s.ID != outIDs[i] {
					return nil, fmt.Errorf("golden: scenario %s request %s continuation %d step %d: recorded token %d, the scheduler reports %d", r.sc.Name, rr.spec.ID, c, i, s.ID, outIDs[i])
				}
			}
			gr.Choices = append(gr.Choices, GoldenChoice{Index: c, FinishReason: res.StopReasons[c], OutputIDs: slices.Clone(outIDs), Text: res.Texts[c], Steps: steps})
		}
		if rr.spec.PromptLogprobs {
			if !rr.cancelled && len(rr.promptSteps) != len(rr.prompt)-1 {
				return nil, fmt.Errorf("golden: scenario %s request %s: %d prompt log-probabilities recorded for %d prompt tokens", r.sc.Name, rr.spec.ID, len(rr.promptSteps), len(rr.prompt))
			}
			gr.PromptSteps = rr.promptSteps
		}
		// A request cancelled before its first token has only its root continuation.
		for c := len(gr.Choices); c < gr.N; c++ {
			gr.Choices = append(gr.Choices, GoldenChoice{Index: c, FinishReason: "cancelled", OutputIDs: []int{}, Steps: []Step{}})
		}
		out = append(out, gr)
	}
	return out, nil
}

// stats returns the scheduler's and pool's totals.
func (r *engineRun) stats() RunStats {
	s := r.sched.Stats()
	p := r.eng.Pool().Stats()
	return RunStats{Steps: s.Steps, Preemptions: s.Preemptions, Evictions: p.Evictions, PrefixHitTokens: p.PrefixHitTokens,
		CowCopies: p.CowCopies, PeakBlocksUsed: s.PeakBlocksUsed, BlocksReclaimed: p.BlocksReclaimed}
}
