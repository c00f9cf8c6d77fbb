package golden

import (
	"fmt"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
)

// hitTracker follows a scenario run's pool events to tell, for every prefix hit, how much
// of it any correct paged cache must also have: kvref reuses an unbroken chain of indexed
// blocks from the start of the prompt, and keeps a full block cached when its last holder
// releases it, whether by finishing (Free) or by sliding past it (Reclaim). An engine may
// instead drop a block its window has left; from the first such block on, its chain is
// broken, so that part of kvref's hit is optional (GoldenRequest.ReclaimedTokens).
//
// With cache groups (Gemma: sliding layers beside full ones) the rule is kept per group: a
// full group's part of a hit is firm up to its first block a window had released; a
// sliding group (which reuses only the blocks covering its window before the first
// computed position, kvcache.Pool.AddSequence) is firm when every block it reused was
// held or freed by a Free. The firm hit is the full groups' firm chain when the sliding
// groups' blocks for it are known firm, else none (the lenient side: kvref cannot tell
// what another engine's window kept).
type hitTracker struct {
	reclaimed map[int]bool // block id → its reference count last dropped to 0 in a Reclaim
	seen      map[int]bool // pool sequences that have had an event
	added     []addedSeq   // sequences added (with a prefix hit) during the current step
	windows   []int        // each cache group's window (0: full attention); one entry for a uniform pool
	blockSize int
	// evictions counts the evicted blocks of full and of sliding cache groups (a pool with
	// groups only).
	evictionsFull, evictionsSliding int
}

// addedSeq is one new pool sequence's prefix hit: blocks reused, and how many of them,
// from the first on, were held or last released by a Free (uniform pools); per group the
// firmness of every reused block (pools with groups).
type addedSeq struct {
	seq, blocks, firm int
	groups            []map[int]bool // per group: table index → firm
}

func newHitTracker() *hitTracker {
	return &hitTracker{reclaimed: map[int]bool{}, seen: map[int]bool{}, windows: []int{0}}
}

// setGroups tells the tracker the pool's cache groups.
func (t *hitTracker) setGroups(cfg kvcache.Config) {
	t.blockSize = cfg.BlockSize
	t.windows = t.windows[:0]
	for g := range cfg.NumGroups() {
		t.windows = append(t.windows, cfg.GroupWindow(g))
	}
}

// hybrid reports whether the pool has cache groups of different windows.
func (t *hitTracker) hybrid() bool { return len(t.windows) > 1 }

// observe is the pool observer.
func (t *hitTracker) observe(e kvcache.Event) {
	switch e.Kind {
	case kvcache.PrefixHit:
		if !t.seen[e.Seq] {
			t.added = append(t.added, addedSeq{seq: e.Seq})
		}
		if a := &t.added[len(t.added)-1]; a.seq == e.Seq {
			held := e.Ref > 1 // someone held it before this hit
			firm := held || !t.reclaimed[e.Block]
			if t.hybrid() {
				if a.groups == nil {
					a.groups = make([]map[int]bool, len(t.windows))
					for g := range a.groups {
						a.groups[g] = map[int]bool{}
					}
				}
				a.groups[e.Group][e.Index] = firm
				a.blocks = max(a.blocks, e.Index+1)
				break
			}
			if a.firm == a.blocks && firm {
				a.firm++
			}
			a.blocks++
		}
	case kvcache.Released:
		if e.Ref == 0 {
			t.reclaimed[e.Block] = false
		}
	case kvcache.Reclaimed:
		if e.Ref == 0 {
			t.reclaimed[e.Block] = true
		}
	case kvcache.Evicted:
		delete(t.reclaimed, e.Block)
		if t.hybrid() {
			if t.windows[e.Group] > 0 {
				t.evictionsSliding++
			} else {
				t.evictionsFull++
			}
		}
	case kvcache.Allocated, kvcache.Flushed:
		delete(t.reclaimed, e.Block)
	}
	if e.Seq >= 0 {
		t.seen[e.Seq] = true
	}
}

// startStep forgets the sequences added in the previous step.
func (t *hitTracker) startStep() { t.added = t.added[:0] }

// firmTokens returns how many of the hit tokens of a request admitted in the current step
// a candidate must also reuse. The pool does not say which new sequence is which request,
// so the sequences added in this step with exactly that many hit blocks are candidates;
// they all hold the same chain unless two requests with hits of equal length but other
// prefixes were admitted together, and then the smallest firm part is taken (the
// lenient side: a candidate is never asked for a hit kvref could not promise).
func (t *hitTracker) firmTokens(hit, blockSize int) (int, error) {
	firm := -1
	for _, a := range t.added {
		if t.hybrid() {
			a.firm = t.groupFirm(a)
		}
		if a.blocks*blockSize == hit && (firm < 0 || a.firm < firm) {
			firm = a.firm
		}
	}
	if firm < 0 {
		return 0, fmt.Errorf("golden: internal: no sequence added in this step reused the %d tokens a request was admitted with", hit)
	}
	return firm * blockSize, nil
}

// noteAdmissions sets, for every request admitted for the first time in the step that
// just ran, the part of its prefix hit a candidate must also have.
func (r *engineRun) noteAdmissions() error {
	bs := r.eng.Pool().Config().BlockSize
	for _, rr := range r.reqs {
		if rr.admitted || r.sched.State(rr.sched, 0) == engine.Waiting {
			continue
		}
		rr.admitted = true
		hit := r.sched.Result(rr.sched).PrefixHitTokens
		if hit == 0 {
			continue
		}
		firm, err := r.hits.firmTokens(hit, bs)
		if err != nil {
			return fmt.Errorf("request %s: %w", rr.spec.ID, err)
		}
		rr.reclaimed = hit - firm
	}
	return nil
}

// notePreemptions records, after a step, whether a continuation that became preempted in
// it had already released a block by sliding: a running continuation with k outputs has
// computed len(prompt)+k−1 positions, and kvref releases block 0 once the next query's
// window starts past it, at W+B−1 computed positions (engine reclaims after every chunk).
func (r *engineRun) notePreemptions() {
	w := slideWindow(r.eng)
	bs := r.eng.Pool().Config().BlockSize
	for _, rr := range r.reqs {
		for c, steps := range rr.steps { // continuations that have produced tokens
			if c == len(rr.preempted) {
				rr.preempted = append(rr.preempted, false)
			}
			now := r.sched.State(rr.sched, c) == engine.Preempted
			if now && !rr.preempted[c] && w > 0 && len(steps) > 0 && len(rr.prompt)+len(steps)-1 >= w+bs-1 {
				r.preemptedAfterReclaim = true
			}
			rr.preempted[c] = now
		}
	}
}

// groupFirm is the firm part, in blocks, of a hit on a pool with cache groups: the full
// groups' leading chain of firm blocks, n, when every sliding group's reused blocks for a
// hit of n (those covering its window before position n·B) are known and firm; else 0.
func (t *hitTracker) groupFirm(a addedSeq) int {
	n := a.blocks
	for g, w := range t.windows {
		if w > 0 {
			continue
		}
		f := 0
		for a.groups[g][f] {
			f++
		}
		n = min(n, f)
	}
	for g, w := range t.windows {
		if w == 0 {
			continue
		}
		for i := max(0, n*t.blockSize-w+1) / t.blockSize; i < n; i++ {
			if firm, reused := a.groups[g][i]; !reused || !firm {
				return 0
			}
		}
	}
	return n
}

// slideWindow is the smallest window by which kvref's pool releases blocks: the window
// every layer shares, or the smallest of the sliding cache groups' (0: none releases).
func slideWindow(e *engine.Engine) int {
	if w := e.Model().Config.ReclaimWindow(); w > 0 {
		return w
	}
	cfg := e.Pool().Config()
	w := 0
	for g := range cfg.NumGroups() {
		if gw := cfg.GroupWindow(g); gw > 0 && (w == 0 || gw < w) {
			w = gw
		}
	}
	return w
}
