package engine

import (
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
)

// One step of the cache protocol, in one place: reserve the slots of each sequence's next
// tokens (kvcache.Pool.Reserve: new blocks, copy-on-write, evictions), run those tokens
// through one batched forward pass (which writes their K/V into the slots), commit them
// (kvcache.Pool.Commit: the slots now hold valid K/V, full blocks join the prefix index),
// and release the blocks a sliding window no longer reads (reclaim). Engine.Step,
// Engine.AllLogits and the Scheduler's Step all go through it.

// span is one sequence's share of a step: its n tokens from position Computed() on.
type span struct {
	kv *kvcache.Sequence
	n  int
	// replayN committed positions from replay on are recomputed first, for their logits
	// (model.Row.Replay: they read the cache and write nothing): a prompt's log-probabilities
	// at the positions a prefix hit took from the cache.
	replay, replayN int
	rows            bool // logits for every one of the n rows (a prompt's log-probabilities)
}

// reserve reserves the slots of every span, in order, and returns what each reservation
// did. At the first error (wrapping kvcache.ErrOutOfBlocks) it stops: that span's pool is
// unchanged, and the spans before it keep their slots (consistent, and reused by the next
// reservation of the same tokens, which then does nothing).
func (e *Engine) reserve(spans []span) ([]kvcache.Reservation, error) {
	res := make([]kvcache.Reservation, len(spans))
	for i, sp := range spans {
		r, err := e.pool.Reserve(sp.kv, sp.n)
		if err != nil {
			return nil, err
		}
		res[i] = r
	}
	return res, nil
}

// compute runs the spans, whose slots are reserved, through one batched forward pass,
// commits their tokens and reclaims what a sliding window left behind. It returns logits in
// row order: with every, one per row (span by span, position by position); without, one per
// replayed row and per row of a span with rows set, and one per other span that reaches its
// sequence's last token, for that token: in *logitsBuf when it is not nil
// (model.Runner.ForwardInto), else in a fresh array. On an error from the forward pass
// nothing is committed.
func (e *Engine) compute(spans []span, every bool, logitsBuf *[]float32) ([][]float32, error) {
	var rows []model.Row
	for _, sp := range spans {
		for pos := sp.replay; pos < sp.replay+sp.replayN; pos++ {
			rows = append(rows, model.Row{Seq: sp.kv, Pos: pos, Logits: true, Replay: true})
		}
		start := sp.kv.Computed()
		for pos := start; pos < start+sp.n; pos++ {
			rows = append(rows, model.Row{Seq: sp.kv, Pos: pos, Logits: every || sp.rows || pos == sp.kv.Len()-1})
		}
	}
	out, err := e.runner.ForwardInto(logitsBuf, e.pool, rows)
	if err != nil {
		return nil, err
	}
	var logits [][]float32
	for b, row := range rows {
		if row.Logits {
			logits = append(logits, out[b])
		}
	}
	for _, sp := range spans {
		if sp.n == 0 {
			continue // replayed rows only: nothing to commit, and no window may slide past rows still to replay
		}
		if err := e.pool.Commit(sp.kv, sp.n); err != nil {
			return nil, err
		}
		e.reclaim(sp.kv)
	}
	return logits, nil
}

// step is reserve then compute: the whole protocol for spans nobody has reserved yet. A
// reservation error comes back as it is, with nothing computed.
func (e *Engine) step(spans []span, every bool) ([]kvcache.Reservation, [][]float32, error) {
	res, err := e.reserve(spans)
	if err != nil {
		return nil, nil, err
	}
	logits, err := e.compute(spans, every, nil)
	return res, logits, err
}
