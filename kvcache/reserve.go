package kvcache

import "fmt"

// Reserve makes sure slots exist for positions [Computed(), Computed()+n) and that every
// block they fall in is private to s: blocks are allocated as needed (evicting cached
// blocks when none is free), and a block shared with another sequence is copied first
// (copy-on-write). It either succeeds completely and returns what it did, or returns an
// error wrapping ErrOutOfBlocks and changes nothing.
func (p *Pool) Reserve(s *Sequence, n int) (Reservation, error) {
	var r Reservation
	if n <= 0 {
		return r, nil
	}
	bs := p.cfg.BlockSize
	first, last := s.computed/bs, (s.computed+n-1)/bs
	need := 0
	for i := first; i <= last; i++ {
		if i >= len(s.table) || p.blocks[s.table[i]].ref > 1 {
			need++
		}
	}
	if need > p.Available() {
		return r, fmt.Errorf("%w: sequence %d needs %d more blocks for %d tokens, %d free or evictable of %d",
			ErrOutOfBlocks, s.id, need, n, p.Available(), p.cfg.NumBlocks)
	}
	for i := first; i <= last; i++ {
		if i < len(s.table) {
			old := s.table[i]
			if p.blocks[old].ref == 1 {
				continue
			}
			id, _ := p.allocate(s.id, &r)
			keep := max(0, s.computed-i*bs) // valid slots of this block for s
			p.copyBlock(id, old, keep)
			p.blocks[id].filled = keep
			p.blocks[old].ref--
			s.table[i] = id
			p.stats.cowCopies++
			e := p.event(CopiedOnWrite, s.id, id)
			e.Index, e.From, e.Slots = i, old, keep
			r.Copies = append(r.Copies, e)
			p.emit(e)
			continue
		}
		id, _ := p.allocate(s.id, &r)
		s.table = append(s.table, id)
		r.New = append(r.New, id)
		e := p.event(Allocated, s.id, id)
		e.Index = len(s.table) - 1
		p.emit(e)
	}
	return r, nil
}
