package cacheview

import (
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
)

// Event is one line of the event log, as GET /v1/cache/events sends it: a change of a block
// (kvcache.Event: alloc, prefix_hit, cow, evict, indexed, release, fork, flush, reclaim) or
// a decision of the scheduler (engine.SchedulerEvent: admit, fork_seq, preempt), a request's
// life in kvref serve ("submit": request Request with Tokens prompt tokens and Blocks
// continuations; "finish": it ended, Reason says why, Computed its prompt tokens reused), or,
// in stepping mode, "reset": a new, empty pool of Blocks blocks of Slots slots. Fields that
// do not apply to a kind are -1 (ids) or 0 (counts). In kvref serve, Request is the server's
// number for the request (Request.ID), not the scheduler's.
type Event struct {
	N     int64  `json:"n"` // its number in the stream, from 1
	Kind  string `json:"kind"`
	Seq   int    `json:"seq"`   // the cache sequence concerned (-1: none)
	Block int    `json:"block"` // the block (-1: none)
	Index int    `json:"index"` // the block's place in the sequence's table (-1: none)
	From  int    `json:"from"`  // cow: the shared block copied from
	Slots int    `json:"slots"` // cow: slots copied; prefix_hit: tokens reused
	Ref   int    `json:"ref"`   // the block's reference count after the event
	Hash  string `json:"hash,omitempty"`

	Request  int `json:"request"`  // admit, fork_seq, preempt: the engine request (-1: none)
	Choice   int `json:"choice"`   // ... its continuation
	Tokens   int `json:"tokens"`   // ... the sequence's tokens
	Computed int `json:"computed"` // admit: tokens from the cache; preempt: tokens to recompute
	Blocks   int `json:"blocks"`   // ... blocks in its table

	Reason string `json:"reason,omitempty"` // finish: the stop reasons, or the error
}

// PoolEvent converts an event of the cache pool.
func PoolEvent(e kvcache.Event) Event {
	out := Event{Kind: e.Kind.String(), Seq: e.Seq, Block: e.Block, Index: e.Index, From: e.From, Slots: e.Slots, Ref: e.Ref,
		Request: -1, Choice: -1}
	if e.Hash != (kvcache.Hash{}) {
		out.Hash = e.Hash.String()
	}
	return out
}

// SchedulerEvent converts an event of the scheduler.
func SchedulerEvent(e engine.SchedulerEvent) Event {
	return Event{Kind: e.Kind.String(), Seq: e.Seq, Block: -1, Index: -1, From: -1,
		Request: e.Request, Choice: e.Choice, Tokens: e.Tokens, Computed: e.Computed, Blocks: e.Blocks}
}
