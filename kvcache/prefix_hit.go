package kvcache

// PrefixHit says what adding a sequence of these tokens (and this cache salt) would take
// from the pool right now: hit, the leading tokens whose blocks it would reuse (as
// CachedPrefix), and pinned, how many of those blocks (in every cache group) are cached-evictable. Adding the
// sequence takes the pinned blocks out of the evictable set, so Available() drops by
// pinned: an admission that counts Available() as room for the rest of the prompt must
// subtract them, or it counts each of them twice (once as reused, once as free).
func (p *Pool) PrefixHit(tokens []int, salt string) (hit, pinned int) {
	ids, hashes := p.matchPrefix(p.saltedRoot(salt), tokens)
	for _, gids := range ids {
		for _, id := range gids {
			if id != Hole && p.blocks[id].inLRU {
				pinned++
			}
		}
	}
	return len(hashes) * p.cfg.BlockSize, pinned
}
