package engine

import "time"

// Prompt log-probabilities through the prefix cache (Request.PromptLogits). The logits of
// prompt position p (the distribution of token p+1) come from the prompt's own forward
// rows: the positions the request computes give them as any prefill row does (with every
// row's logits asked for), and the positions a prefix hit took from the cache are
// recomputed first by replayed rows (model.Row.Replay), which read the cached K/V and write
// nothing. So the request reuses its cached blocks as any other does, never copies or
// unshares them, and costs the others only its own rows, batched into the same steps under
// the same token budget. Its logits are the cache-free ones bit for bit: a row's K/V depend
// only on the tokens up to it, so the cached K/V are the bits a recomputation would write.

// promptRowsChunk is the most rows with logits one prompt-logits sequence computes in a
// step: each row's logits are a vocabulary of float32 (128 KiB at 32,000 tokens).
const promptRowsChunk = 128

// PromptRow is the logits of one prompt position, for a request with PromptLogits.
type PromptRow struct {
	Request int       // the request's id
	Pos     int       // the position, 0 to len(Prompt)-2
	Next    int       // the prompt's token at Pos+1, whose log-probability the row gives
	Logits  []float32 // the raw logits at Pos
}

// PromptRows returns the prompt rows delivered by the last Step, in order: for each
// request with PromptLogits, every position from 0 to len(Prompt)-2 exactly once, in
// position order over the steps, all of them before its first token.
func (s *Scheduler) PromptRows() []PromptRow {
	rows := s.prompts
	s.prompts = nil
	return rows
}

// wantsRows reports whether q computes its rows for their logits: the first continuation
// of a PromptLogits request, before its first token.
func wantsRows(q *sequence) bool {
	return q.r.req.PromptLogits && q.idx == 0 && len(q.output) == 0
}

// startReplay sets, at q's admission, the cached prompt positions to recompute: from the
// first row not yet delivered to the end of the prefix hit (a preempted sequence
// readmitted with a different hit replays only what it has not delivered).
func (s *Scheduler) startReplay(q *sequence) {
	q.replay, q.replayEnd = 0, 0
	if !wantsRows(q) {
		return
	}
	q.replayEnd = min(q.kv.Computed(), len(q.r.req.Prompt)-1)
	q.replay = min(q.r.promptNext, q.replayEnd)
}

// share is q's work in this step within budget tokens: rp replayed rows first, then, once
// the replay is done, n rows of its next uncomputed tokens.
func (s *Scheduler) share(q *sequence, budget int) (rp, n int) {
	chunk := s.chunkSize()
	if wantsRows(q) {
		chunk = min(chunk, promptRowsChunk)
	}
	rp = min(q.replayEnd-q.replay, chunk, budget)
	if q.replay+rp == q.replayEnd {
		n = min(q.kv.Len()-q.kv.Computed(), chunk-rp, budget-rp)
	}
	return rp, n
}

// deliverRows takes the logits of a step (compute's, for the plan's spans) and delivers
// the prompt rows among them; it returns, per plan entry, the logits of its sequence's last
// token when the step reached it (nil otherwise).
func (s *Scheduler) deliverRows(plan []scheduled, spans []span, logits [][]float32) [][]float32 {
	last := make([][]float32, len(plan))
	// Where each span's rows end (committed) and its sequence's length, read before a
	// failed prompt row can free a sequence.
	ends, lens := make([]int, len(plan)), make([]int, len(plan))
	for i, p := range plan {
		ends[i], lens[i] = p.q.kv.Computed(), p.q.kv.Len()
	}
	cur := 0
	for i, p := range plan {
		q := p.q
		for k := range p.replay {
			s.promptRow(q, q.replay+k, logits[cur])
			cur++
		}
		q.replay += p.replay
		if p.n == 0 {
			continue
		}
		switch end := ends[i]; {
		case spans[i].rows:
			for pos := end - p.n; pos < end; pos++ {
				s.promptRow(q, pos, logits[cur])
				if pos == lens[i]-1 {
					last[i] = logits[cur]
				}
				cur++
			}
		case end == lens[i]:
			last[i] = logits[cur]
			cur++
		}
	}
	return last
}

// promptRow delivers the logits of prompt position pos of q's request, unless it has been
// delivered already (a recomputation after a preemption) or is the prompt's last position
// (whose logits are the first token's). Logits that are not finite fail the request.
func (s *Scheduler) promptRow(q *sequence, pos int, logits []float32) {
	r := q.r
	if pos != r.promptNext || pos >= len(r.req.Prompt)-1 || q.state == Finished {
		return
	}
	if err := checkFinite(logits, q.idx, -1, pos); err != nil {
		s.fail(q, err)
		return
	}
	r.promptNext++
	row := PromptRow{Request: r.id, Pos: pos, Next: r.req.Prompt[pos+1], Logits: logits}
	if !r.req.Check {
		s.prompts = append(s.prompts, row)
		return
	}
	// With Check, the rows are held until the last one, then recomputed by the cache-free
	// reference in one pass and released only if bit-identical.
	r.heldRows = append(r.heldRows, row)
	if r.promptNext < len(r.req.Prompt)-1 {
		return
	}
	held := r.heldRows
	r.heldRows = nil
	cfg := s.e.pool.Config()
	ref, err := s.e.runner.Reference(r.req.Prompt[:len(r.req.Prompt)-1], cfg.KType, cfg.VType, held[0].Pos)
	if err == nil {
		for _, h := range held {
			if err = Compare(h.Logits, ref[h.Pos-held[0].Pos], q.idx, -1, h.Pos); err != nil {
				break
			}
		}
	}
	if err != nil {
		s.fail(q, err)
		return
	}
	s.stats.CheckedTokens += int64(len(held))
	s.prompts = append(s.prompts, held...)
}

// scored ends a ScoreOnly request whose prompt is computed: nothing is generated.
func (s *Scheduler) scored(q *sequence) {
	if q.r.firstLogits.IsZero() {
		q.r.firstLogits = time.Now()
	}
	s.finish(q, "length")
}
