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

// CheckWindow is how many held steps of one sequence a Verifier recomputes together by
// default: one cache-free pass over the sequence recomputes the logits of all of them, so
// checking n steps costs O(n²/CheckWindow) rows instead of O(n²). Output waits for its
// window: with Request.Check, tokens arrive in bursts of up to CheckWindow.
const CheckWindow = 32

// Verifier holds the outputs of one sequence until the logits they came from have been
// recomputed by the cache-free reference and found bit-for-bit equal: the strict form of
// Request.Check, under which nothing unverified is ever emitted. Each output (a Token, a printed
// line: whatever the caller emits, T) is held with the cached logits of its step and the
// position they were computed at; Verify checks every held step in one reference pass and
// releases, in order, the outputs whose logits match, up to the first that does not.
// Nothing else releases an output: Discard drops them unverified (a cancelled request).
//
// The zero value holds nothing and is due every CheckWindow steps.
type Verifier[T any] struct {
	// Window is how many held steps make Due report true (0: CheckWindow).
	Window int

	held []heldStep[T]
}

// heldStep is one output waiting for its check.
type heldStep[T any] struct {
	seq, step, pos int
	logits         []float32
	out            T
}

// Hold adds an output: out was produced from logits, which the cached path computed at
// position pos of the sequence (the step-th output of continuation seq, for error messages).
// Positions must increase from one Hold to the next until the next Verify or Discard.
func (v *Verifier[T]) Hold(seq, step, pos int, logits []float32, out T) {
	v.held = append(v.held, heldStep[T]{seq: seq, step: step, pos: pos, logits: logits, out: out})
}

// Held is the number of outputs waiting for their check.
func (v *Verifier[T]) Held() int { return len(v.held) }

// Due reports whether a full window is held: time to Verify.
func (v *Verifier[T]) Due() bool {
	w := v.Window
	if w <= 0 {
		w = CheckWindow
	}
	return len(v.held) >= w
}

// Verify recomputes the held positions with the engine's cache-free reference over tokens
// (the sequence's tokens, at least up to the last held position) in the cache's storage
// types, and releases the held outputs in order while their logits are bit-identical. It
// returns the released outputs and, when a step differs, a *CheckError for it; the outputs
// from that step on are dropped, never released. A reference failure (any other error)
// releases nothing. Nothing stays held either way.
func (v *Verifier[T]) Verify(e *Engine, tokens []int) ([]T, error) {
	held := v.held
	v.held = nil
	if len(held) == 0 {
		return nil, nil
	}
	last, from := held[len(held)-1].pos, held[0].pos
	if last >= len(tokens) {
		return nil, fmt.Errorf("engine: verifying position %d of a %d-token sequence", last, len(tokens))
	}
	cfg := e.pool.Config()
	ref, err := e.runner.Reference(tokens[:last+1], cfg.KType, cfg.VType, from)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(held))
	for _, h := range held {
		if err := Compare(h.logits, ref[h.pos-from], h.seq, h.step, h.pos); err != nil {
			return out, err
		}
		out = append(out, h.out)
	}
	return out, nil
}

// Discard drops every held output unverified and returns how many there were.
func (v *Verifier[T]) Discard() int {
	n := len(v.held)
	v.held = nil
	return n
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
