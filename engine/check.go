package engine

import (
	"fmt"
	"math"
)

// CheckError reports cached logits that differ from the cache-free reference.
type CheckError struct {
	Seq, Step, Pos int
	Index          int     // first logit index that differs
	MaxAbsDiff     float64 // largest absolute difference over the vocabulary
}

// Error says which step differs and by how much.
func (e *CheckError) Error() string {
	return fmt.Sprintf("check failed: sequence %d step %d (position %d): cached logits differ from the cache-free reference (first at token %d, max |Δ| = %g)",
		e.Seq, e.Step, e.Pos, e.Index, e.MaxAbsDiff)
}

// checkWindow is how many steps of one sequence are checked together: one cache-free pass
// over the sequence recomputes the logits of all of them, so checking n steps costs
// O(n²/checkWindow) rows instead of O(n²).
const checkWindow = 32

// checker collects a sequence's logits and compares them, a window at a time, with the
// cache-free reference at the same positions.
type checker struct {
	pending []pendingCheck
}

type pendingCheck struct {
	seq, step, pos int
	logits         []float32
}

// add records the logits the cached path produced at position pos of the sequence whose
// tokens are tokens, checking the window when it is full.
func (c *checker) add(e *Engine, tokens []int, seq, step, pos int, logits []float32) error {
	c.pending = append(c.pending, pendingCheck{seq: seq, step: step, pos: pos, logits: logits})
	if len(c.pending) < checkWindow {
		return nil
	}
	return c.flush(e, tokens)
}

// flush recomputes the pending positions with no cache and requires bit-for-bit equality,
// reporting the first step that differs.
func (c *checker) flush(e *Engine, tokens []int) error {
	if len(c.pending) == 0 {
		return nil
	}
	cfg := e.Pool.Config()
	last := c.pending[len(c.pending)-1].pos
	from := c.pending[0].pos
	ref, err := e.Runner.Reference(tokens[:last+1], cfg.KType, cfg.VType, from)
	if err != nil {
		return err
	}
	for _, p := range c.pending {
		if err := Compare(p.logits, ref[p.pos-from], p.seq, p.step, p.pos); err != nil {
			return err
		}
	}
	c.pending = c.pending[:0]
	return nil
}

// Compare returns a *CheckError unless got and want are bit-for-bit equal.
func Compare(got, want []float32, seq, step, pos int) error {
	first := -1
	maxDiff := 0.0
	for i := range want {
		if i >= len(got) || math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if first < 0 {
				first = i
			}
			if i < len(got) {
				maxDiff = math.Max(maxDiff, math.Abs(float64(got[i])-float64(want[i])))
			}
		}
	}
	if first < 0 && len(got) == len(want) {
		return nil
	}
	return &CheckError{Seq: seq, Step: step, Pos: pos, Index: first, MaxAbsDiff: maxDiff}
}
