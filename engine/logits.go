package engine

import "fmt"

// AllLogits runs tokens through the cache as a fresh sequence, chunk rows at a time, and
// calls fn with the logits at every position in order (fn must not keep the slice). The
// sequence is freed at the end. Cached unreferenced blocks are flushed first, so that no
// prefix hit skips positions. It is what perplexity-style evaluation needs: the logits of
// every position, computed through the cache and its storage type.
func (e *Engine) AllLogits(tokens []int, chunk int, fn func(pos int, logits []float32)) error {
	if len(tokens) > e.context {
		return fmt.Errorf("engine: %d tokens exceed the context of %d", len(tokens), e.context)
	}
	if chunk < 1 {
		chunk = 64
	}
	pool := e.pool
	pool.Flush() // a prefix hit would leave positions without logits
	s := pool.AddSequence(tokens, "")
	defer pool.Free(s)
	for s.Computed() < s.Len() {
		from := s.Computed()
		_, logits, err := e.step([]span{{kv: s, n: min(chunk, s.Len()-from)}}, true)
		if err != nil {
			return err
		}
		for i, l := range logits {
			fn(from+i, l)
		}
	}
	return nil
}
