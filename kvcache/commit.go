package kvcache

import "fmt"

// Commit records that the K/V of positions [Computed(), Computed()+n) have been written.
// Blocks that become full get their chain hash and join the prefix index (an Indexed event
// each), unless another block already holds the same prefix.
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
		b.filled = max(b.filled, pos%bs+1)
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
		e := p.event(Indexed, s.id, id)
		e.Index, e.Hash = i, h
		p.emit(e)
	}
	return nil
}
