package kvcache

import "slices"

// State is what a block is doing, as a viewer colours it.
type State string

// The states of a block. Every block is in exactly one (Check holds the pool to that).
const (
	StateFree   State = "free"   // on the free list: holds nothing
	StateUsed   State = "used"   // in exactly one block-table entry
	StateShared State = "shared" // in two or more block-table entries (refcount > 1)
	StateCached State = "cached" // full and in the prefix index, but unreferenced: evictable, least recently used first
)

// BlockView is one block of a Snapshot: its state, and what its slots hold.
type BlockView struct {
	ID     int    `json:"id"`
	State  State  `json:"state"`
	Ref    int    `json:"ref"`
	Group  int    `json:"group,omitempty"` // the cache group whose layers it holds (in use or cached)
	Filled int    `json:"filled"`          // slots holding committed K/V
	Hash   string `json:"hash,omitempty"`  // chain hash prefix, when the block is in the prefix index
	// Tokens are the token ids of the filled slots, slot 0 first: the stored ids of an
	// indexed block, else those of its owners at the block's positions.
	Tokens []int `json:"tokens"`
	// Seqs are the live sequences whose tables hold the block, in id order.
	Seqs []int `json:"seqs"`
}

// SequenceView is one live sequence of a Snapshot.
type SequenceView struct {
	ID    int   `json:"id"`
	Table []int `json:"table"` // block ids; Hole (-1) for a block reclaimed by a sliding window
	// Tables are the block tables of every cache group, for a pool with groups (Table is
	// group 0's).
	Tables   [][]int `json:"tables,omitempty"`
	Len      int     `json:"len"` // tokens
	Computed int     `json:"computed"`
}

// Snapshot is the whole pool at one moment, for a viewer: statistics, every block, every live
// sequence. It shares nothing with the pool.
type Snapshot struct {
	Stats     Stats          `json:"stats"`
	Blocks    []BlockView    `json:"blocks"`
	Sequences []SequenceView `json:"sequences"`
}

// Snapshot describes the pool as it is now. The pool keeps token ids only for indexed
// blocks; the tokens of any other block in use are read from the first of its owners (all
// owners agree on the filled slots: a block is shared only by a prefix hit of identical
// tokens or by a fork, and written only when private). It costs O(blocks + table entries +
// tokens) and must not run while the pool is being changed.
func (p *Pool) Snapshot() Snapshot {
	snap := Snapshot{Stats: p.Stats(), Blocks: make([]BlockView, len(p.blocks))}
	ids := make([]int, 0, len(p.seqs))
	for id := range p.seqs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	bs := p.cfg.BlockSize
	for i := range p.blocks {
		b := &p.blocks[i]
		v := BlockView{ID: i, Ref: b.ref, Filled: b.filled, Tokens: []int{}, Seqs: []int{}}
		if b.ref > 0 || b.inLRU {
			v.Group = b.group
		}
		switch {
		case b.ref > 1:
			v.State = StateShared
		case b.ref == 1:
			v.State = StateUsed
		case b.inLRU:
			v.State = StateCached
		default:
			v.State = StateFree
		}
		if b.hashed {
			v.Hash = b.hash.String()
			for _, t := range b.tokens[:b.filled] {
				v.Tokens = append(v.Tokens, int(t))
			}
		}
		snap.Blocks[i] = v
	}
	for _, id := range ids {
		s := p.seqs[id]
		sv := SequenceView{ID: id, Table: slices.Clone(s.tables[0]), Len: len(s.tokens), Computed: s.computed}
		if len(p.cfg.Groups) > 0 {
			for _, t := range s.tables {
				sv.Tables = append(sv.Tables, slices.Clone(t))
			}
		}
		snap.Sequences = append(snap.Sequences, sv)
		for _, table := range s.tables {
			for idx, bid := range table {
				if bid == Hole {
					continue
				}
				v := &snap.Blocks[bid]
				v.Seqs = append(v.Seqs, id)
				if len(v.Tokens) > 0 || v.Filled == 0 {
					continue
				}
				start := idx * bs
				end := min(start+v.Filled, len(s.tokens))
				if start < end {
					v.Tokens = slices.Clone(s.tokens[start:end])
				}
			}
		}
	}
	if snap.Sequences == nil {
		snap.Sequences = []SequenceView{}
	}
	return snap
}
