package cacheview

import (
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/tokenizer"
)

// View is GET /v1/cache: the pool at one moment with the numbers of the formula that sizes
// it, and what the page needs to label it.
type View struct {
	Mode  string    `json:"mode"` // "serve" or "step"
	Model ModelInfo `json:"model"`

	// The formula: bytes per token = 2 · layers · kv_heads · head_dim · bytes per element
	// (per row with scales for int8, fp8-e4m3 and q8_0: layers · (K row + V row)).
	CacheTypeK        string `json:"cache_type_k"`
	CacheTypeV        string `json:"cache_type_v"`
	ElementBytes      int    `json:"element_bytes"` // bytes per stored value when K and V share an unscaled type, else 0
	KRowBytes         int    `json:"k_row_bytes"`
	VRowBytes         int    `json:"v_row_bytes"`
	BytesPerToken     int64  `json:"bytes_per_token"`
	BlockSize         int    `json:"block_size"`
	BytesPerBlock     int64  `json:"bytes_per_block"`
	BlocksTotal       int    `json:"blocks_total"`
	BytesTotal        int64  `json:"bytes_total"`
	BytesInUse        int64  `json:"bytes_in_use"`
	Context           int    `json:"context"`             // tokens per full sequence
	BlocksPerSequence int    `json:"blocks_per_sequence"` // a full sequence's blocks (internal/plan's rule)
	SequencesFit      int64  `json:"sequences_fit"`       // full sequences the pool holds at once

	Stats  kvcache.Stats `json:"stats"`
	Engine *engine.Stats `json:"engine,omitempty"` // the scheduler's totals (serve mode)
	Step   *Settings     `json:"step,omitempty"`   // the stepper's settings (step mode)
	// Events is how many events were published before this snapshot: the stream's events
	// numbered up to it are reflected here, later ones are not.
	Events    int64      `json:"events"`
	Blocks    []Block    `json:"blocks"`
	Sequences []Sequence `json:"sequences"`
	// Requests (serve mode) are the live requests, oldest first, then the last finished
	// ones, newest first (Requests.Snapshot).
	Requests []Request `json:"requests,omitempty"`
	// History says how much the server keeps for pages that open later (serve mode).
	History *History `json:"history,omitempty"`
}

// History is what a server keeps for the pages that open after the fact.
type History struct {
	Events   int `json:"events"`   // the ring of recent events (replayed by GET /v1/cache/events?since=0)
	Requests int `json:"requests"` // the finished requests kept for the requests panel
}

// ModelInfo names the model and gives its shape.
type ModelInfo struct {
	Name          string `json:"name"`
	Layers        int    `json:"layers"`
	Heads         int    `json:"heads"`
	KVHeads       int    `json:"kv_heads"`
	HeadDim       int    `json:"head_dim"`
	Vocab         int    `json:"vocab_size"`
	Context       int    `json:"context"`                  // trained context
	SlidingWindow int    `json:"sliding_window,omitempty"` // every layer's window, when blocks are reclaimed
	WeightsBytes  int64  `json:"weights_bytes"`
}

// Block is one block with the text of the tokens in its slots.
type Block struct {
	kvcache.BlockView
	Text []string `json:"text"` // what each token adds to the text (its vocabulary entry for control tokens)
}

// Sequence is one live sequence with what the front end knows about it.
type Sequence struct {
	kvcache.SequenceView
	Request *int   `json:"request,omitempty"` // serve: the engine request (from the scheduler's admissions and forks)
	Choice  *int   `json:"choice,omitempty"`  // serve: the continuation within it
	Parent  *int   `json:"parent,omitempty"`  // step: the sequence it was forked from
	Prompt  int    `json:"prompt,omitempty"`  // step: prompt tokens
	Text    string `json:"text,omitempty"`    // step: the sequence's text so far
}

// Build describes e's pool from a snapshot of it (taken by the pool's owner between
// steps). name is the model's name as served; events the number of events published
// before the snapshot.
func Build(mode, name string, e *engine.Engine, snap kvcache.Snapshot, events int64) View {
	c, pc := e.Model().Config, e.Pool().Config()
	v := View{
		Mode: mode,
		Model: ModelInfo{Name: name, Layers: c.Layers, Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			Vocab: c.Vocab, Context: c.Context, SlidingWindow: c.ReclaimWindow(), WeightsBytes: e.Model().Weights.Bytes()},
		CacheTypeK: pc.KType.String(), CacheTypeV: pc.VType.String(),
		KRowBytes: pc.KRowBytes(), VRowBytes: pc.VRowBytes(),
		BytesPerToken: snap.Stats.BytesPerToken, BlockSize: pc.BlockSize, BytesPerBlock: snap.Stats.BytesPerBlock,
		BlocksTotal: pc.NumBlocks, BytesTotal: snap.Stats.BytesTotal, BytesInUse: snap.Stats.BytesInUse,
		Context: e.Context(), Stats: snap.Stats, Events: events,
		Blocks: make([]Block, len(snap.Blocks)), Sequences: make([]Sequence, len(snap.Sequences)),
	}
	if n, ok := plan.ElementBytes(pc.KType); ok && pc.KType == pc.VType {
		v.ElementBytes = n
	}
	// How many full sequences the pool holds, by the planner's rule (a sliding window caps
	// a sequence's blocks): the pool's bytes as the memory, nothing for weights.
	r, err := plan.Compute(plan.Input{Shape: c.PlanShape(), KType: pc.KType, VType: pc.VType, Context: e.Context(),
		BlockSize: pc.BlockSize, Memory: snap.Stats.BytesTotal})
	if err == nil {
		v.BlocksPerSequence, v.SequencesFit = r.BlocksPerSequence, r.MaxSequences
	}
	tok := e.Model().Tokenizer
	for i, b := range snap.Blocks {
		text := make([]string, len(b.Tokens))
		for j, id := range b.Tokens {
			text[j] = TokenText(tok, id)
		}
		v.Blocks[i] = Block{BlockView: b, Text: text}
	}
	for i, s := range snap.Sequences {
		v.Sequences[i] = Sequence{SequenceView: s}
	}
	return v
}

// TokenText is what a token adds to the text, or its vocabulary entry when it adds none
// (a control token such as <s>), for display.
func TokenText(tok tokenizer.Tokenizer, id int) string {
	if p := tok.Piece(id); len(p) > 0 {
		return string(p)
	}
	return tok.TokenText(id)
}
