package tokenizer

import "unicode/utf8"

// merge is the result of merging one pair of tokens: the merge's rank (its
// index in the merges list; lower merges first) and the merged token's id.
type merge struct {
	rank int32
	id   int32
}

// pairKey packs the ids of two neighbouring tokens into a map key.
func pairKey(left, right int32) uint64 { return uint64(uint32(left))<<32 | uint64(uint32(right)) }

// bpeModel is the BPE model proper: it turns one pre-tokenized word into
// token ids by merging neighbouring symbols, lowest rank first.
type bpeModel struct {
	vocab  map[string]int32 // token text -> id (the model's vocabulary)
	merges map[uint64]merge // pairKey(left, right) -> merge

	ignoreMerges bool // a word that is a whole token is emitted as is (Llama 3)
	byteFallback bool // a character not in the vocabulary becomes <0xNN> tokens
	unk          int32
	fuseUnk      bool   // consecutive unknown characters become one UNK
	subwordPfx   string // continuing_subword_prefix of every symbol but the first
	wordSfx      string // end_of_word_suffix of the last symbol

	// llamaBytes makes a character that is not in the vocabulary come out as
	// the tokens of its single bytes, where the vocabulary has them, as
	// llama.cpp does (instead of byte fallback or UNK).
	llamaBytes bool

	byteTok [256]int32 // id of <0xNN> for byte fallback, -1 if none
}

// bpeSymbol is one symbol of a word being merged: a token, linked to its
// neighbours. A symbol with n == 0 has been merged into its left neighbour.
type bpeSymbol struct {
	id         int32 // token id, -1 for an unknown character (llamaBytes)
	start, n   int   // the symbol's bytes in the word (for llamaBytes)
	prev, next int
}

// mergeCand is a queued candidate merge of the symbol at pos with its
// right neighbour into token id.
type mergeCand struct {
	rank, pos int32
	id        int32
}

// mergeScratch holds buffers reused across the words of one Encode call.
type mergeScratch struct {
	syms []bpeSymbol
	heap []mergeCand
}

// tokenizeWord appends the ids of word to out. word is one piece of
// pre-tokenized, normalized (and, for byte-level models, byte-encoded) text.
// It follows Hugging Face's BPE::merge_word and llama.cpp's
// llm_tokenizer_bpe_session: split into characters, then repeatedly apply
// the lowest-ranked merge among neighbouring pairs, leftmost first on ties.
func (m *bpeModel) tokenizeWord(word string, sc *mergeScratch, out []int) []int {
	if word == "" {
		return out
	}
	if m.ignoreMerges {
		if id, ok := m.vocab[word]; ok {
			return append(out, int(id))
		}
	}
	syms := m.initialSymbols(word, sc.syms[:0])
	sc.syms = syms

	h := sc.heap[:0]
	for i := 0; i+1 < len(syms); i++ {
		if mg, ok := m.pair(syms[i].id, syms[i+1].id); ok {
			h = heapPush(h, mergeCand{rank: mg.rank, pos: int32(i), id: mg.id})
		}
	}
	for len(h) > 0 {
		var c mergeCand
		c, h = heapPop(h)
		s := &syms[c.pos]
		if s.n == 0 || s.next < 0 {
			continue
		}
		r := &syms[s.next]
		// A candidate is stale when either side has changed since it was
		// queued: the pair must still merge into the same token.
		if mg, ok := m.pair(s.id, r.id); !ok || mg.id != c.id {
			continue
		}
		s.id = c.id
		s.n += r.n
		r.n = 0
		s.next = r.next
		if s.next >= 0 {
			syms[s.next].prev = int(c.pos)
		}
		if s.prev >= 0 {
			if mg, ok := m.pair(syms[s.prev].id, s.id); ok {
				h = heapPush(h, mergeCand{rank: mg.rank, pos: int32(s.prev), id: mg.id})
			}
		}
		if s.next >= 0 {
			if mg, ok := m.pair(s.id, syms[s.next].id); ok {
				h = heapPush(h, mergeCand{rank: mg.rank, pos: c.pos, id: mg.id})
			}
		}
	}
	sc.heap = h

	for i := 0; i >= 0 && i < len(syms); i = syms[i].next {
		s := syms[i]
		if s.id >= 0 {
			out = append(out, int(s.id))
			continue
		}
		// llamaBytes: the tokens of the single bytes, where they exist.
		for j := s.start; j < s.start+s.n; j++ {
			if id, ok := m.vocab[word[j:j+1]]; ok {
				out = append(out, int(id))
			}
		}
	}
	return out
}

// pair looks up the merge of two neighbouring symbols.
func (m *bpeModel) pair(left, right int32) (merge, bool) {
	if left < 0 || right < 0 {
		return merge{}, false
	}
	mg, ok := m.merges[pairKey(left, right)]
	return mg, ok
}

// initialSymbols splits word into one symbol per character. A character
// that is not a token becomes byte-fallback tokens, UNK, the tokens of its
// bytes (llamaBytes) or nothing, as the model says.
func (m *bpeModel) initialSymbols(word string, syms []bpeSymbol) []bpeSymbol {
	add := func(id int32, start, n int) {
		i := len(syms)
		syms = append(syms, bpeSymbol{id: id, start: start, n: n, prev: i - 1, next: i + 1})
	}
	pendingUnk := false // an UNK waiting to be added (so that it can be fused)
	unkStart := 0
	flushUnk := func(end int) {
		if pendingUnk {
			add(m.unk, unkStart, end-unkStart)
			pendingUnk = false
		}
	}
	var key []byte
	for off := 0; off < len(word); {
		_, n := utf8.DecodeRuneInString(word[off:])
		ch := word[off : off+n]
		last := off+n == len(word)
		key = key[:0]
		if off > 0 {
			key = append(key, m.subwordPfx...)
		}
		key = append(key, ch...)
		if last {
			key = append(key, m.wordSfx...)
		}
		if id, ok := m.vocab[string(key)]; ok {
			flushUnk(off)
			add(id, off, n)
			off += n
			continue
		}
		switch {
		case m.llamaBytes:
			add(-1, off, n)
		case m.byteFallback && m.hasByteTokens(ch):
			flushUnk(off)
			for j := 0; j < n; j++ {
				add(m.byteTok[ch[j]], off+j, 1)
			}
		case m.unk >= 0:
			if !pendingUnk || !m.fuseUnk {
				flushUnk(off)
				pendingUnk, unkStart = true, off
			}
		}
		off += n
	}
	flushUnk(len(word))
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

// hasByteTokens reports whether every byte of ch has a <0xNN> token.
func (m *bpeModel) hasByteTokens(ch string) bool {
	for i := 0; i < len(ch); i++ {
		if m.byteTok[ch[i]] < 0 {
			return false
		}
	}
	return true
}

// candBefore orders merge candidates: lowest rank first, then leftmost.
func candBefore(a, b mergeCand) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos)
}

// heapPush adds c to the binary min-heap h.
func heapPush(h []mergeCand, c mergeCand) []mergeCand {
	h = append(h, c)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !candBefore(c, h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = c
	return h
}

// heapPop removes and returns the first candidate of the non-empty heap h.
func heapPop(h []mergeCand) (mergeCand, []mergeCand) {
	top := h[0]
	last := len(h) - 1
	x := h[last]
	h = h[:last]
	if last == 0 {
		return top, h
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= last {
			break
		}
		if r := c + 1; r < last && candBefore(h[r], h[c]) {
			c = r
		}
		if !candBefore(h[c], x) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = x
	return top, h
}
