package engine

import "iter"

// queue is the scheduler's waiting line: sequences in order, with pushes at both ends and
// removal from anywhere in O(1) amortized time, whatever its length, so that cancelling one
// request among a million waiting ones does not walk the million.
//
// The front part is a stack (preempted sequences go before everything, the last preempted
// first), the back part a FIFO with a moving head. A removed sequence is not searched for: its
// queued flag is cleared and the entry skipped when it reaches the front; the FIFO is
// compacted once most of it is such entries. Each push gives the sequence a new ticket, kept
// in its entry: a sequence removed from the middle and pushed again later (admitted, then
// preempted) is in line once, at its new place, and its old entry stays dead.
type queue struct {
	front  []entry // pushed to the front: the last element is the first in line
	back   []entry // back[head:] in order, after every element of front
	head   int
	live   int    // sequences in the line (live entries)
	dead   int    // entries removed since the last compaction (some may have surfaced and gone)
	ticket uint64 // the last ticket given
}

// entry is one place in the line: the sequence and the ticket it was pushed with.
type entry struct {
	q      *sequence
	ticket uint64
}

// live reports whether the entry is its sequence's place in line.
func (e entry) live() bool { return e.q.queued && e.q.ticket == e.ticket }

// Len returns the number of sequences in the line.
func (w *queue) Len() int { return w.live }

// All yields the sequences in line, front first.
func (w *queue) All() iter.Seq[*sequence] {
	return func(yield func(*sequence) bool) {
		for i := len(w.front) - 1; i >= 0; i-- {
			if e := w.front[i]; e.live() && !yield(e.q) {
				return
			}
		}
		for _, e := range w.back[w.head:] {
			if e.live() && !yield(e.q) {
				return
			}
		}
	}
}

// PushBack puts q at the end of the line.
func (w *queue) PushBack(q *sequence) {
	w.back = append(w.back, w.enter(q))
	w.live++
}

// PushFront puts q at the front of the line.
func (w *queue) PushFront(q *sequence) {
	w.front = append(w.front, w.enter(q))
	w.live++
}

// enter marks q as in line with a new ticket and returns its entry.
func (w *queue) enter(q *sequence) entry {
	w.ticket++
	q.queued, q.ticket = true, w.ticket
	return entry{q, w.ticket}
}

// Front returns the first sequence in line, or nil when the line is empty.
func (w *queue) Front() *sequence {
	for n := len(w.front); n > 0; n = len(w.front) {
		if e := w.front[n-1]; e.live() {
			return e.q
		}
		w.front[n-1] = entry{}
		w.front = w.front[:n-1]
	}
	for w.head < len(w.back) {
		if e := w.back[w.head]; e.live() {
			return e.q
		}
		w.back[w.head] = entry{}
		w.head++
	}
	return nil
}

// PopFront takes the first sequence out of the line; the line must not be empty.
func (w *queue) PopFront() *sequence {
	q := w.Front()
	if n := len(w.front); n > 0 && w.front[n-1].q == q {
		w.front[n-1] = entry{}
		w.front = w.front[:n-1]
	} else {
		w.back[w.head] = entry{}
		w.head++
	}
	q.queued = false
	w.live--
	w.compact()
	return q
}

// Remove takes q out of the line wherever it is; q must be in the line.
func (w *queue) Remove(q *sequence) {
	q.queued = false
	w.live--
	w.dead++
	w.compact()
}

// compact drops the removed entries and the consumed head of back once they may be most of
// it, so that the line's memory stays proportional to its length. Each compaction follows at
// least half as many pops and removals as it copies entries: O(1) amortized.
func (w *queue) compact() {
	if w.head+w.dead < 64 || w.head+w.dead < len(w.back)/2 {
		return
	}
	kept := w.back[:0]
	for _, e := range w.back[w.head:] {
		if e.live() {
			kept = append(kept, e)
		}
	}
	clear(w.back[len(kept):])
	w.back, w.head, w.dead = kept, 0, 0
	if len(w.front) == 0 {
		return
	}
	front := w.front[:0]
	for _, e := range w.front {
		if e.live() {
			front = append(front, e)
		}
	}
	clear(w.front[len(front):])
	w.front = front
}
