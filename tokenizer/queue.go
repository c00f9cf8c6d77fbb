package tokenizer

// bigramQueue is a binary max-heap of merge candidates: the highest score
// first and, among equal scores, the leftmost.
type bigramQueue struct {
	h []bigram
}

// before reports whether a must be merged before b.
func before(a, b bigram) bool {
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}

func (q *bigramQueue) len() int { return len(q.h) }

func (q *bigramQueue) push(b bigram) {
	q.h = append(q.h, b)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(b, q.h[p]) {
			break
		}
		q.h[i] = q.h[p]
		i = p
	}
	q.h[i] = b
}

func (q *bigramQueue) pop() bigram {
	top := q.h[0]
	last := len(q.h) - 1
	x := q.h[last]
	q.h = q.h[:last]
	if last == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= last {
			break
		}
		if r := c + 1; r < last && before(q.h[r], q.h[c]) {
			c = r
		}
		if !before(q.h[c], x) {
			break
		}
		q.h[i] = q.h[c]
		i = c
	}
	q.h[i] = x
	return top
}
