package tokenizer

// symbol is a run of bytes of the escaped text, linked to its neighbours.
// A symbol whose n is 0 has been merged into its left neighbour.
type symbol struct {
	start, n   int
	prev, next int // indexes into the symbol slice, -1 at the ends
}

// bigram is a candidate merge of two neighbouring symbols into the token
// with the given score; size is their combined length when it was queued,
// which tells a stale candidate from a live one.
type bigram struct {
	left, right int32
	size        int32
	score       float32
}

// tokenize appends the tokens of the escaped text t (spaces already
// replaced by "▁") to out, as llama.cpp's llm_tokenizer_spm_session does:
// split into UTF-8 characters, then repeatedly merge the neighbouring pair
// whose concatenation is the highest-scoring vocabulary token (leftmost on
// ties), and finally emit each symbol as its token or, if it has none, as
// byte tokens.
func (s *SPM) tokenize(t string, out []int) []int {
	if t == "" {
		return out
	}
	syms := make([]symbol, 0, len(t))
	for off := 0; off < len(t); {
		n := min(utf8Len(t[off]), len(t)-off)
		i := len(syms)
		syms = append(syms, symbol{start: off, n: n, prev: i - 1, next: i + 1})
		off += n
	}
	syms[len(syms)-1].next = -1

	q := bigramQueue{h: make([]bigram, 0, len(syms))}
	try := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		l, r := &syms[left], &syms[right]
		id, ok := s.ids[t[l.start:r.start+r.n]]
		if !ok {
			return
		}
		q.push(bigram{left: int32(left), right: int32(right), score: s.scores[id], size: int32(l.n + r.n)})
	}
	for i := 1; i < len(syms); i++ {
		try(i-1, i)
	}
	for q.len() > 0 {
		b := q.pop()
		left := int(b.left)
		l, r := &syms[left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != int(b.size) {
			continue // one side has been merged since b was queued
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = left
		}
		try(l.prev, left)
		try(left, l.next)
	}

	for i := 0; i != -1; i = syms[i].next {
		out = s.emit(t[syms[i].start:syms[i].start+syms[i].n], out)
	}
	return out
}

// emit appends the token of one final symbol. A symbol that is not in the
// vocabulary (always a single character: merges only ever form tokens)
// becomes one byte token per byte, or a single UNK if a byte token is
// missing and the vocabulary has an UNK token.
func (s *SPM) emit(sym string, out []int) []int {
	if id, ok := s.ids[sym]; ok {
		return append(out, id)
	}
	for i := 0; i < len(sym); i++ {
		if s.byteIDs[sym[i]] < 0 {
			if s.unk >= 0 {
				return append(out, s.unk)
			}
			break
		}
	}
	for i := 0; i < len(sym); i++ {
		if id := s.byteIDs[sym[i]]; id >= 0 {
			out = append(out, id)
		}
	}
	return out
}

// utf8Len returns the length of the UTF-8 sequence that starts with byte c,
// judged from its high bits alone (llama.cpp's unicode_len_utf8): stray
// continuation bytes count as 1, invalid lead bytes as 4.
func utf8Len(c byte) int {
	switch {
	case c < 0xC0:
		return 1
	case c < 0xE0:
		return 2
	case c < 0xF0:
		return 3
	default:
		return 4
	}
}
