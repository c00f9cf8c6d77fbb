package engine

import (
	"fmt"

	"github.com/kvref/kvref/kvcache"
)

// Generate runs one request to completion on its own scheduler: prefill (reusing cached
// prefix blocks), then decode steps in which all its continuations advance together in one
// batched forward pass. emit is called for every token in order; an error from emit stops
// generation. The request's sequences are freed at the end (their full blocks stay cached
// for later prefix hits).
func (e *Engine) Generate(req Request, emit func(Token) error) (Result, error) {
	return e.GenerateWith(SchedulerConfig{}, req, emit)
}

// GenerateWith is Generate with a scheduler configuration (batch budget, chunk size).
func (e *Engine) GenerateWith(cfg SchedulerConfig, req Request, emit func(Token) error) (Result, error) {
	s := e.NewScheduler(cfg)
	id, err := s.Add(req)
	if err != nil {
		return Result{}, err
	}
	defer s.Cancel(id) // frees the blocks if we stop early
	if err := s.RunAll(emit); err != nil {
		return s.Result(id), err
	}
	return s.Result(id), s.Err(id)
}

// Step computes every uncomputed token of the given sequences in one batched forward pass
// (prefill chunks and decode tokens together) and returns each sequence's logits at its last
// token. Blocks are reserved first; if the pool runs out, the error wraps
// kvcache.ErrOutOfBlocks, nothing is computed, and the sequences may keep blocks already
// reserved for them (still consistent, reused by the next attempt). It is the low-level
// step under the scheduler, for tests and tools that drive the cache directly.
func (e *Engine) Step(seqs []*kvcache.Sequence) ([][]float32, error) {
	spans := make([]span, len(seqs))
	for i, s := range seqs {
		n := s.Len() - s.Computed()
		if n <= 0 {
			return nil, fmt.Errorf("engine: sequence %d has no uncomputed token to run", s.ID())
		}
		spans[i] = span{kv: s, n: n}
	}
	if _, err := e.reserve(spans); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return e.compute(spans, false, nil)
}
