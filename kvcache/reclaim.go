package kvcache

// Hole marks a block-table entry whose block was reclaimed: its positions fell out of the
// sequence's attention window (sliding-window attention) and nothing will read them again.
const Hole = -1

// Reclaim releases the blocks of s, in every cache group, that hold only positions before
// first: with sliding-window attention in every layer, the next token at position p attends
// over [p-W+1, p], so once first = p-W+1 no later token reads an earlier position. Each such
// block loses s's reference (one Reclaimed event each) and its table entry becomes Hole. A
// full block nobody else holds stays cached for prefix hits, as after Free; a block another
// sequence still sees (a shared prefix, a fork) stays in use. It returns how many blocks s
// released. first is clamped to the computed positions: a position not yet computed is never
// released. (With cache groups of different windows, Slide releases each group by its own.)
func (p *Pool) Reclaim(s *Sequence, first int) int {
	if _, ok := p.seqs[s.id]; !ok {
		return 0
	}
	n := 0
	for g := range s.tables {
		n += p.reclaimGroup(s, g, first)
	}
	return n
}

// Slide releases, in every sliding cache group (Config.Groups with a window W), the blocks
// of s that the next token (at position Computed()) no longer reads: those before position
// Computed()-W+1. Full groups keep every block. It returns how many blocks s released.
func (p *Pool) Slide(s *Sequence) int {
	if _, ok := p.seqs[s.id]; !ok {
		return 0
	}
	n := 0
	for g := range s.tables {
		if w := p.cfg.GroupWindow(g); w > 0 {
			n += p.reclaimGroup(s, g, s.computed-w+1)
		}
	}
	return n
}

// reclaimGroup is Reclaim in one group.
func (p *Pool) reclaimGroup(s *Sequence, g, first int) int {
	first = min(first, s.computed)
	table := s.tables[g]
	n := 0
	for i := range max(0, first) / p.cfg.BlockSize { // blocks [0, first/B) end before first
		id := table[i]
		if id == Hole {
			continue
		}
		p.release(id)
		table[i] = Hole
		p.stats.reclaimed++
		if len(p.stats.groupReclaimed) > g {
			p.stats.groupReclaimed[g]++
		}
		e := p.event(Reclaimed, s.id, id)
		e.Index = i
		p.emit(e)
		n++
	}
	return n
}
