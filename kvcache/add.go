package kvcache

import "slices"

// AddSequence starts a sequence with the given tokens, reusing every full block of its
// prefix that the cache already holds (prefix caching; see matchPrefix for the rule that
// keeps the last token to compute). Its Computed() is the number of reused tokens, and its
// Table() the reused blocks (one PrefixHit event each).
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
	for i, id := range ids {
		b := &p.blocks[id]
		if b.inLRU {
			p.lruRemove(id)
		}
		b.ref++
		e := p.event(PrefixHit, s.id, id)
		e.Index, e.Slots, e.Hash = i, p.cfg.BlockSize, hashes[i]
		p.emit(e)
	}
	s.table, s.hashes = ids, hashes
	s.computed = len(ids) * p.cfg.BlockSize
	p.stats.prefixHitTokens += int64(s.computed)
	return s
}

// CachedPrefix reports how many leading tokens a sequence of these tokens (and this cache
// salt) would reuse from the cache right now (a multiple of the block size, always less than
// len(tokens)).
func (p *Pool) CachedPrefix(tokens []int, salt string) int {
	ids, _ := p.matchPrefix(p.saltedRoot(salt), tokens)
	return len(ids) * p.cfg.BlockSize
}

// matchPrefix finds the cached blocks holding the longest prefix of tokens, by chain hash
// confirmed by the stored token ids. At least the last token is always left out, so that a
// new sequence has a token to compute and logits to sample from: with B slots per block, at
// most floor((len-1)/B) blocks match.
func (p *Pool) matchPrefix(root Hash, tokens []int) (ids []int, hashes []Hash) {
	bs := p.cfg.BlockSize
	parent := root
	for n := 0; n+bs <= len(tokens)-1; n += bs {
		chunk := tokens[n : n+bs]
		h := chainHash(parent, chunk)
		id, ok := p.index[h]
		if !ok || !sameTokens(p.blocks[id].tokens, chunk) {
			break
		}
		ids = append(ids, id)
		hashes = append(hashes, h)
		parent = h
	}
	return ids, hashes
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
