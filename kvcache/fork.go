package kvcache

import "slices"

// Fork starts a new sequence that shares every block and token of s, in every cache group.
// The first write into a shared block copies it (copy-on-write, in Reserve), so the two
// never disturb each other.
func (p *Pool) Fork(s *Sequence) *Sequence {
	f := &Sequence{
		id:       p.nextSeq,
		tokens:   slices.Clone(s.tokens),
		tables:   make([][]int, len(s.tables)),
		computed: s.computed,
		hashes:   slices.Clone(s.hashes),
		root:     s.root,
		pool:     p,
	}
	p.nextSeq++
	p.seqs[f.id] = f
	for g, table := range s.tables {
		f.tables[g] = slices.Clone(table)
		for i, id := range table {
			if id == Hole {
				continue
			}
			p.blocks[id].ref++
			e := p.event(Forked, f.id, id)
			e.Index = i
			p.emit(e)
		}
	}
	return f
}
