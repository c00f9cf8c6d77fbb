package kvcache

import (
	"errors"
	"fmt"
)

// Check verifies every invariant of the pool and returns all violations joined, or nil:
//   - every block is in exactly one of free / cached-evictable / in use;
//   - each reference count equals the number of block-table entries pointing at the block;
//   - the LRU list is well linked and holds exactly the unreferenced hashed blocks;
//   - the prefix index maps only to hashed full blocks under their own hash;
//   - every sequence's full blocks that are hashed hold exactly the sequence's tokens, and
//     the sequence's chain of hashes matches its tokens;
//   - every sequence's table covers its computed tokens and points at no free block, in
//     every cache group, and only at blocks of that group;
//   - a reclaimed entry (Hole) only stands for a full, hashed block.
func (p *Pool) Check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("kvcache: "+format, args...)) }
	bs := p.cfg.BlockSize

	refs := make([]int, len(p.blocks))
	for _, s := range p.seqs {
		if len(s.tables) != p.groups {
			bad("sequence %d has %d block tables for %d cache groups", s.id, len(s.tables), p.groups)
			continue
		}
		for g, table := range s.tables {
			if need := p.cfg.BlocksFor(s.computed); len(table) < need {
				bad("sequence %d has %d computed tokens but only %d blocks in group %d", s.id, s.computed, len(table), g)
			}
		}
		if s.computed > len(s.tokens) {
			bad("sequence %d has %d computed tokens but only %d tokens", s.id, s.computed, len(s.tokens))
			continue
		}
		if len(s.hashes) != s.computed/bs {
			bad("sequence %d has %d block hashes for %d full blocks", s.id, len(s.hashes), s.computed/bs)
		}
		parent := s.root
		for i := range min(len(s.hashes), len(s.tokens)/bs) {
			if h := chainHash(parent, s.tokens[i*bs:(i+1)*bs]); h != s.hashes[i] {
				bad("sequence %d block %d: hash %s does not match its tokens (%s)", s.id, i, s.hashes[i], h)
			}
			parent = s.hashes[i]
		}
		for g, table := range s.tables {
			for i, id := range table {
				if id == Hole {
					if i >= len(s.hashes) {
						bad("sequence %d group %d block %d was reclaimed before it was full and hashed", s.id, g, i)
					}
					continue
				}
				if id < 0 || id >= len(p.blocks) {
					bad("sequence %d group %d block %d: id %d out of range", s.id, g, i, id)
					continue
				}
				refs[id]++
				b := &p.blocks[id]
				if b.group != g {
					bad("sequence %d group %d block %d (id %d) holds the layers of group %d", s.id, g, i, id, b.group)
				}
				if i < len(s.hashes) && b.hashed && (b.hash != s.hashes[i] || !sameTokens(b.tokens, s.tokens[i*bs:(i+1)*bs])) {
					bad("sequence %d group %d block %d (id %d) is indexed with other tokens", s.id, g, i, id)
				}
			}
		}
	}
	inFree := make([]bool, len(p.blocks))
	for _, id := range p.free {
		if inFree[id] {
			bad("block %d is on the free list twice", id)
		}
		inFree[id] = true
	}
	inLRU := make([]bool, len(p.blocks))
	n, prev := 0, -1
	for id := p.lruHead; id >= 0; id = p.blocks[id].next {
		if n > len(p.blocks) {
			bad("LRU list has a cycle")
			break
		}
		if p.blocks[id].prev != prev {
			bad("LRU block %d has prev %d, want %d", id, p.blocks[id].prev, prev)
		}
		inLRU[id] = true
		prev = id
		n++
	}
	if prev != p.lruTail || n != p.lruLen {
		bad("LRU list has %d blocks ending at %d, pool says %d ending at %d", n, prev, p.lruLen, p.lruTail)
	}
	for id := range p.blocks {
		b := &p.blocks[id]
		if b.ref != refs[id] {
			bad("block %d has ref %d but %d table entries point at it", id, b.ref, refs[id])
		}
		states := 0
		if inFree[id] {
			states++
		}
		if inLRU[id] {
			states++
		}
		if refs[id] > 0 {
			states++
		}
		if states != 1 {
			bad("block %d is in %d of free/cached/in-use (free=%v cached=%v refs=%d)", id, states, inFree[id], inLRU[id], refs[id])
		}
		if inLRU[id] != b.inLRU {
			bad("block %d inLRU flag %v disagrees with the list", id, b.inLRU)
		}
		if inLRU[id] && !b.hashed {
			bad("block %d is cached but not hashed", id)
		}
		if inFree[id] && b.hashed {
			bad("block %d is free but still hashed", id)
		}
		if b.hashed {
			if b.filled != bs || len(b.tokens) != bs {
				bad("block %d is hashed but holds %d slots and %d tokens of %d", id, b.filled, len(b.tokens), bs)
			}
			if got, ok := p.index[indexKey{b.group, b.hash}]; !ok || got != id {
				bad("block %d is hashed but the index maps its hash to %d (present %v)", id, got, ok)
			}
		}
	}
	for k, id := range p.index {
		if id < 0 || id >= len(p.blocks) || !p.blocks[id].hashed || p.blocks[id].hash != k.hash || p.blocks[id].group != k.group {
			bad("index entry %s (group %d) points at block %d which does not hold it", k.hash, k.group, id)
		}
	}
	return errors.Join(errs...)
}
