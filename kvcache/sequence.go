package kvcache

import (
	"fmt"
	"slices"
)

// Sequence is a token list plus a block table. Tokens [0, Computed()) have their K/V in the
// cache; later tokens (a prompt's uncached tail, a just-sampled token) are waiting to be
// computed. Slot of position pos: block Table()[pos/B], slot pos%B.
type Sequence struct {
	id       int
	tokens   []int
	table    []int
	computed int
	hashes   []Hash // hashes of the sequence's full blocks so far, in order
	root     Hash   // parent hash of the first block: the pool's root, salted per sequence
	pool     *Pool
}

// ID is the sequence's number in its pool.
func (s *Sequence) ID() int { return s.id }

// Tokens returns the sequence's tokens (do not modify).
func (s *Sequence) Tokens() []int { return s.tokens }

// Len is the number of tokens.
func (s *Sequence) Len() int { return len(s.tokens) }

// Computed is the number of leading tokens whose K/V are in the cache.
func (s *Sequence) Computed() int { return s.computed }

// Table returns the block table (do not modify).
func (s *Sequence) Table() []int { return s.table }

// Append adds tokens (for example a sampled one) that will be computed later.
func (s *Sequence) Append(tokens ...int) { s.tokens = append(s.tokens, tokens...) }

// Slot returns the block and slot holding position pos's K/V.
func (s *Sequence) Slot(pos int) (blockID, slot int) {
	bs := s.pool.cfg.BlockSize
	return s.table[pos/bs], pos % bs
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

// CachedPrefix reports how many leading tokens a sequence of these tokens (and this cache
// salt) would reuse from the cache right now (a multiple of the block size, always less than
// len(tokens)).
func (p *Pool) CachedPrefix(tokens []int, salt string) int {
	ids, _ := p.matchPrefix(p.saltedRoot(salt), tokens)
	return len(ids) * p.cfg.BlockSize
}

// saltedRoot is the chain's root for a cache salt: the pool's root when salt is empty, else
// a hash of both. Sequences with different salts never share a block (vLLM's cache_salt:
// tenants that must not observe each other's prefixes, or a cache-disabled control run).
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

// Available is the number of blocks an allocation can obtain: free plus cached-evictable.
func (p *Pool) Available() int { return p.available() }

// AddSequence starts a sequence with the given tokens, reusing every full block of its
// prefix that the cache already holds (prefix caching; see matchPrefix for the rule that
// keeps the last token to compute). Its Computed() is the number of reused tokens.
func (p *Pool) AddSequence(tokens []int) *Sequence { return p.AddSequenceSalted(tokens, "") }

// AddSequenceSalted is AddSequence with a cache salt: the sequence shares blocks only with
// sequences of the same salt.
func (p *Pool) AddSequenceSalted(tokens []int, salt string) *Sequence {
	s := &Sequence{id: p.nextSeq, tokens: slices.Clone(tokens), pool: p, root: p.saltedRoot(salt)}
	p.nextSeq++
	p.seqs[s.id] = s
	p.stats.promptTokens += int64(len(tokens))
	ids, hashes := p.matchPrefix(s.root, tokens)
	for _, id := range ids {
		b := &p.blocks[id]
		if b.inLRU {
			p.lruRemove(id)
		}
		b.ref++
		p.clock++
		b.touched = p.clock
	}
	s.table, s.hashes = ids, hashes
	s.computed = len(ids) * p.cfg.BlockSize
	p.stats.prefixHitTokens += int64(s.computed)
	return s
}

// Reserve makes sure slots exist for positions [Computed(), Computed()+n) and that every
// block they fall in is private to s: blocks are allocated as needed, and a block shared
// with another sequence is copied first (copy-on-write). It either succeeds completely or
// returns an error wrapping ErrOutOfBlocks and changes nothing.
func (p *Pool) Reserve(s *Sequence, n int) error {
	if n <= 0 {
		return nil
	}
	bs := p.cfg.BlockSize
	first, last := s.computed/bs, (s.computed+n-1)/bs
	need := 0
	for i := first; i <= last; i++ {
		if i >= len(s.table) || p.blocks[s.table[i]].ref > 1 {
			need++
		}
	}
	if need > p.available() {
		return fmt.Errorf("%w: sequence %d needs %d more blocks for %d tokens, %d free or evictable of %d",
			ErrOutOfBlocks, s.id, need, n, p.available(), p.cfg.NumBlocks)
	}
	for i := first; i <= last; i++ {
		if i < len(s.table) {
			old := s.table[i]
			if p.blocks[old].ref == 1 {
				continue
			}
			id, _ := p.allocate()
			keep := s.computed - i*bs // valid slots of this block for s
			if keep < 0 {
				keep = 0
			}
			p.copyBlock(id, old, keep)
			p.blocks[id].filled = keep
			p.blocks[old].ref--
			s.table[i] = id
			p.stats.cowCopies++
			continue
		}
		id, _ := p.allocate()
		s.table = append(s.table, id)
	}
	return nil
}

// Commit records that the K/V of positions [Computed(), Computed()+n) have been written.
// Blocks that become full get their chain hash and join the prefix index.
func (p *Pool) Commit(s *Sequence, n int) error {
	if n < 0 || s.computed+n > len(s.tokens) {
		return fmt.Errorf("kvcache: commit of %d tokens for sequence %d with %d computed of %d tokens", n, s.id, s.computed, len(s.tokens))
	}
	bs := p.cfg.BlockSize
	if need := p.cfg.BlocksFor(s.computed + n); need > len(s.table) {
		return fmt.Errorf("kvcache: commit of %d tokens for sequence %d beyond its %d reserved blocks; call Reserve first", n, s.id, len(s.table))
	}
	end := s.computed + n
	for pos := s.computed; pos < end; pos++ {
		b := &p.blocks[s.table[pos/bs]]
		if f := pos%bs + 1; f > b.filled {
			b.filled = f
		}
	}
	s.computed = end
	for len(s.hashes) < s.computed/bs {
		i := len(s.hashes)
		parent := s.root
		if i > 0 {
			parent = s.hashes[i-1]
		}
		chunk := s.tokens[i*bs : (i+1)*bs]
		h := chainHash(parent, chunk)
		s.hashes = append(s.hashes, h)
		id := s.table[i]
		b := &p.blocks[id]
		if b.hashed {
			continue // a reused block, already indexed
		}
		if _, taken := p.index[h]; taken {
			continue // another block already holds the same prefix; this one stays private
		}
		b.hashed = true
		b.hash = h
		b.tokens = make([]int32, bs)
		for j, t := range chunk {
			b.tokens[j] = int32(t)
		}
		p.index[h] = id
	}
	p.clock++
	for _, id := range s.table {
		p.blocks[id].touched = p.clock
	}
	return nil
}

// Fork starts a new sequence that shares every block and token of s. The first write into
// a shared block copies it (copy-on-write), so the two never disturb each other.
func (p *Pool) Fork(s *Sequence) *Sequence {
	f := &Sequence{
		id:       p.nextSeq,
		tokens:   slices.Clone(s.tokens),
		table:    slices.Clone(s.table),
		computed: s.computed,
		hashes:   slices.Clone(s.hashes),
		root:     s.root,
		pool:     p,
	}
	p.nextSeq++
	p.seqs[f.id] = f
	for _, id := range f.table {
		p.blocks[id].ref++
	}
	return f
}

// Free ends a sequence. Its blocks lose one reference each; full blocks nobody uses any
// more stay cached (evictable, least recently used first), the rest return to the free
// list. Blocks are released from the last to the first, so a prefix's later blocks are
// evicted before its first ones.
func (p *Pool) Free(s *Sequence) {
	if _, ok := p.seqs[s.id]; !ok {
		return
	}
	delete(p.seqs, s.id)
	for i := len(s.table) - 1; i >= 0; i-- {
		p.release(s.table[i])
	}
	s.table = nil
	s.computed = 0
	s.hashes = nil
}

// Sequences returns the live sequences ordered by id.
func (p *Pool) Sequences() []*Sequence {
	out := make([]*Sequence, 0, len(p.seqs))
	for _, s := range p.seqs {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Sequence) int { return a.id - b.id })
	return out
}

// Flush drops every cached-evictable block from the prefix index and returns it to the free
// list (as if all were evicted at once), and returns how many there were. Blocks in use are
// untouched.
func (p *Pool) Flush() int {
	n := 0
	for p.lruHead >= 0 {
		id := p.lruHead
		p.lruRemove(id)
		p.unindex(id)
		p.blocks[id].filled = 0
		p.free = append(p.free, id)
		n++
	}
	return n
}
