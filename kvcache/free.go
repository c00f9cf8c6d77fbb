package kvcache

// Free ends a sequence. Its blocks lose one reference each; full blocks nobody uses any
// more stay cached (evictable, least recently used first), the rest return to the free
// list. Blocks are released from the last to the first (at each place, group by group), so
// a prefix's later blocks are evicted before its first ones. Freeing a sequence twice does
// nothing.
func (p *Pool) Free(s *Sequence) {
	if _, ok := p.seqs[s.id]; !ok {
		return
	}
	delete(p.seqs, s.id)
	for i := len(s.tables[0]) - 1; i >= 0; i-- {
		for _, table := range s.tables {
			if i >= len(table) || table[i] == Hole {
				continue
			}
			id := table[i]
			p.release(id)
			e := p.event(Released, s.id, id)
			e.Index = i
			p.emit(e)
		}
	}
	s.tables = make([][]int, p.groups)
	s.computed = 0
	s.hashes = nil
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
		p.emit(p.event(Flushed, -1, id))
		n++
	}
	return n
}
