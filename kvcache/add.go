package kvcache

import "slices"

// AddSequence starts a sequence with the given tokens, reusing every full block of its
// prefix that the cache already holds (prefix caching; see matchPrefix for the rule that
// keeps the last token to compute, and for what each cache group must hold). Its Computed()
// is the number of reused tokens, and its tables the reused blocks (one PrefixHit event
// each, group by group; a sliding group's blocks before its window are Holes).
//
// salt is the request's cache salt (vLLM's cache_salt): sequences share blocks only with
// sequences of the same salt, so tenants that must not observe each other's prefixes, or a
// cache-disabled control run, stay apart. "" is the common, unsalted cache.
func (p *Pool) AddSequence(tokens []int, salt string) *Sequence {
	s := &Sequence{id: p.nextSeq, tokens: slices.Clone(tokens), pool: p, root: p.saltedRoot(salt)}
	p.nextSeq++
	p.seqs[s.id] = s
	p.stats.promptTokens += int64(len(tokens))
	ids, hashes := p.matchPrefix(s.root, tokens)
	for _, gids := range ids {
		for i, id := range gids {
			if id == Hole {
				continue
			}
			b := &p.blocks[id]
			if b.inLRU {
				p.lruRemove(id)
			}
			b.ref++
			e := p.event(PrefixHit, s.id, id)
			e.Index, e.Slots, e.Hash = i, p.cfg.BlockSize, hashes[i]
			p.emit(e)
		}
	}
	s.tables, s.hashes = ids, hashes
	s.computed = len(hashes) * p.cfg.BlockSize
	p.stats.prefixHitTokens += int64(s.computed)
	return s
}

// CachedPrefix reports how many leading tokens a sequence of these tokens (and this cache
// salt) would reuse from the cache right now (a multiple of the block size, always less than
// len(tokens)).
func (p *Pool) CachedPrefix(tokens []int, salt string) int {
	_, hashes := p.matchPrefix(p.saltedRoot(salt), tokens)
	return len(hashes) * p.cfg.BlockSize
}

// matchPrefix finds the cached blocks holding the longest prefix of tokens that every cache
// group can serve, by chain hash confirmed by the stored token ids, and returns them per
// group (ids[g]) with the prefix's chain hashes. At least the last token is always left
// out, so that a new sequence has a token to compute and logits to sample from: with B slots
// per block, at most floor((len-1)/B) blocks match.
//
// A hit of n blocks means the new sequence starts computing at position P = n·B. A full
// group must hold every block of [0, P). A sliding group of window W must hold only the
// blocks covering [P-W+1, P), the window of the token at P (and of every later token): its
// earlier entries are Holes, as if the sequence had slid past them. So a hit may be longer
// than the sliding group's unbroken chain, and a sliding block that was released and then
// evicted shortens it. n is the largest count every group can serve (never wrong: each block
// of it holds its group's K/V of exactly these tokens at these positions).
func (p *Pool) matchPrefix(root Hash, tokens []int) (ids [][]int, hashes []Hash) {
	bs := p.cfg.BlockSize
	limit := 0
	if len(tokens) > 0 {
		limit = (len(tokens) - 1) / bs
	}
	full := false // a full group bounds the hit by its unbroken chain
	for g := range p.groups {
		full = full || p.cfg.GroupWindow(g) == 0
	}
	// found[g][i]: group g holds block i of the prefix; miss[g][i]: misses among blocks < i.
	found := make([][]int, p.groups)
	miss := make([][]int, p.groups)
	for g := range p.groups {
		miss[g] = []int{0}
	}
	parent := root
	for i := range limit {
		chunk := tokens[i*bs : (i+1)*bs]
		h := chainHash(parent, chunk)
		fullHeld := true // every full group holds block i
		for g := range p.groups {
			id, ok := p.index[indexKey{g, h}]
			if !ok || !sameTokens(p.blocks[id].tokens, chunk) {
				id = Hole
			}
			found[g] = append(found[g], id)
			m := miss[g][i]
			if id == Hole {
				m++
				fullHeld = fullHeld && p.cfg.GroupWindow(g) > 0
			}
			miss[g] = append(miss[g], m)
		}
		hashes = append(hashes, h)
		parent = h
		if full && !fullHeld {
			break // a full group lacks block i: no hit reaches past it
		}
	}
	n := len(hashes)
	for ; n > 0; n-- {
		if p.serves(miss, n) {
			break
		}
	}
	ids = make([][]int, p.groups)
	for g := range p.groups {
		lo := p.windowStart(g, n)
		ids[g] = make([]int, n)
		for i := range n {
			ids[g][i] = Hole
			if i >= lo {
				ids[g][i] = found[g][i]
			}
		}
	}
	return ids, hashes[:n]
}

// serves reports whether every group holds the blocks a hit of n blocks needs from it.
func (p *Pool) serves(miss [][]int, n int) bool {
	for g := range p.groups {
		if miss[g][n]-miss[g][p.windowStart(g, n)] > 0 {
			return false
		}
	}
	return true
}

// windowStart is the first block group g needs for a sequence that starts computing at
// block n (position n·B): 0 for a full group, else the block of position n·B−W+1.
func (p *Pool) windowStart(g, n int) int {
	w := p.cfg.GroupWindow(g)
	if w == 0 {
		return 0
	}
	return max(0, n*p.cfg.BlockSize-w+1) / p.cfg.BlockSize
}

// saltedRoot is the chain's root for a cache salt: the pool's root when salt is empty, else
// a hash of both.
func (p *Pool) saltedRoot(salt string) Hash {
	if salt == "" {
		return p.root
	}
	return chainHash(p.root, saltTokens(salt))
}

// saltTokens spells a salt as pseudo-tokens for chainHash (negative, so no real token id
// sequence can collide with it by construction of the chain).
func saltTokens(salt string) []int {
	out := make([]int, 0, len(salt)+1)
	out = append(out, -1)
	for _, b := range []byte(salt) {
		out = append(out, -2-int(b))
	}
	return out
}
