package kvcache

// PrefixHit says what adding a sequence of these tokens (and this cache salt) would take
// from the pool right now: hit, the leading tokens whose blocks it would reuse (as
// CachedPrefix), and pinned, how many of those blocks are cached-evictable. Adding the
// sequence takes the pinned blocks out of the evictable set, so Available() drops by
// pinned: an admission that counts Available() as room for the rest of the prompt must
// subtract them, or it counts each of them twice (once as reused, once as free).
func (p *Pool) PrefixHit(tokens []int, salt string) (hit, pinned int) {
	ids, _ := p.matchPrefix(p.saltedRoot(salt), tokens)
	for _, id := range ids {
		if p.blocks[id].inLRU {
			pinned++
		}
	}
	return len(ids) * p.cfg.BlockSize, pinned
}
