package kvcache

import "fmt"

// Reserve makes sure slots exist for positions [Computed(), Computed()+n) in every cache
// group and that every block they fall in is private to s: blocks are allocated as needed
// (evicting cached blocks when none is free), and a block shared with another sequence is
// copied first (copy-on-write). It counts what every group needs before it takes anything:
// it either succeeds completely and returns what it did (its events carry their group), or
// returns an error wrapping ErrOutOfBlocks and changes nothing.
func (p *Pool) Reserve(s *Sequence, n int) (Reservation, error) {
	var r Reservation
	if n <= 0 {
		return r, nil
	}
	bs := p.cfg.BlockSize
	first, last := s.computed/bs, (s.computed+n-1)/bs
	need := 0
	for _, table := range s.tables {
		for i := first; i <= last; i++ {
			if i >= len(table) || table[i] == Hole || p.blocks[table[i]].ref > 1 {
				need++
			}
		}
	}
	if need > p.Available() {
		return r, fmt.Errorf("%w: sequence %d needs %d more blocks for %d tokens, %d free or evictable of %d",
			ErrOutOfBlocks, s.id, need, n, p.Available(), p.cfg.NumBlocks)
	}
	for g := range s.tables {
		for i := first; i <= last; i++ {
			table := s.tables[g]
			if i < len(table) && table[i] != Hole {
				old := table[i]
				if p.blocks[old].ref == 1 {
					continue
				}
				id, _ := p.allocate(s.id, g, &r)
				keep := max(0, s.computed-i*bs) // valid slots of this block for s
				p.copyBlock(id, old, keep)
				p.blocks[id].filled = keep
				p.blocks[old].ref--
				table[i] = id
				p.stats.cowCopies++
				e := p.event(CopiedOnWrite, s.id, id)
				e.Index, e.From, e.Slots = i, old, keep
				r.Copies = append(r.Copies, e)
				p.emit(e)
				continue
			}
			id, _ := p.allocate(s.id, g, &r)
			idx := len(table)
			if i < len(table) { // a Hole at a position to compute: cannot happen (holes lie before Computed), but stay consistent
				table[i], idx = id, i
			} else {
				s.tables[g] = append(table, id)
			}
			r.New = append(r.New, id)
			r.NewGroups = append(r.NewGroups, g)
			e := p.event(Allocated, s.id, id)
			e.Index = idx
			p.emit(e)
		}
	}
	return r, nil
}
