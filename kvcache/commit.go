package kvcache

import "fmt"

// Commit records that the K/V of positions [Computed(), Computed()+n) have been written, in
// every cache group. Blocks that become full get their chain hash and join the prefix index
// of their group (an Indexed event each), unless another block of the group already holds
// the same prefix.
func (p *Pool) Commit(s *Sequence, n int) error {
	if n < 0 || s.computed+n > len(s.tokens) {
		return fmt.Errorf("kvcache: commit of %d tokens for sequence %d with %d computed of %d tokens", n, s.id, s.computed, len(s.tokens))
	}
	bs := p.cfg.BlockSize
	for g, table := range s.tables {
		if need := p.cfg.BlocksFor(s.computed + n); need > len(table) {
			return fmt.Errorf("kvcache: commit of %d tokens for sequence %d beyond its %d reserved blocks in group %d; call Reserve first", n, s.id, len(table), g)
		}
	}
	end := s.computed + n
	for _, table := range s.tables {
		for pos := s.computed; pos < end; pos++ {
			b := &p.blocks[table[pos/bs]]
			b.filled = max(b.filled, pos%bs+1)
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
		for g, table := range s.tables {
			id := table[i]
			if id == Hole {
				continue
			}
			b := &p.blocks[id]
			if b.hashed {
				continue // a reused block, already indexed
			}
			k := indexKey{g, h}
			if _, taken := p.index[k]; taken {
				continue // another block already holds the same prefix; this one stays private
			}
			b.hashed = true
			b.hash = h
			b.tokens = make([]int32, bs)
			for j, t := range chunk {
				b.tokens[j] = int32(t)
			}
			p.index[k] = id
			e := p.event(Indexed, s.id, id)
			e.Index, e.Hash = i, h
			p.emit(e)
		}
	}
	return nil
}
