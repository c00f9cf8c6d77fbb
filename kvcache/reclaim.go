package kvcache

// Hole marks a block-table entry whose block was reclaimed: its positions fell out of the
// sequence's attention window (sliding-window attention) and nothing will read them again.
const Hole = -1

// Reclaim releases the blocks of s that hold only positions before first: with
// sliding-window attention, the next token at position p attends over [p-W+1, p], so once
// first = p-W+1 no later token reads an earlier position. Each such block loses s's
// reference (one Reclaimed event each) and its table entry becomes Hole. A full block
// nobody else holds stays cached for prefix hits, as after Free; a block another sequence
// still sees (a shared prefix, a fork) stays in use. It returns how many blocks s released.
// first is clamped to the computed positions: a position not yet computed is never released.
func (p *Pool) Reclaim(s *Sequence, first int) int {
	if _, ok := p.seqs[s.id]; !ok {
		return 0
	}
	first = min(first, s.computed)
	n := 0
	for i := range first / p.cfg.BlockSize { // blocks [0, first/B) end before first
		id := s.table[i]
		if id == Hole {
			continue
		}
		p.release(id)
		s.table[i] = Hole
		p.stats.reclaimed++
		e := p.event(Reclaimed, s.id, id)
		e.Index = i
		p.emit(e)
		n++
	}
	return n
}
