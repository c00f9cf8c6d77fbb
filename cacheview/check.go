package cacheview

import (
	"fmt"

	"github.com/kvref/kvref/kvcache"
)

// Check verifies that a snapshot agrees with itself: the blocks in each state add up to
// the statistics, every block has one owner per reference, every in-use block's tokens fill
// exactly its filled slots, and every sequence's table entries are blocks that list the
// sequence as an owner. A viewer (or a test) can hold any snapshot to it.
func (v View) Check() error {
	count := map[kvcache.State]int{}
	for _, b := range v.Blocks {
		count[b.State]++
		if len(b.Seqs) != b.Ref {
			return fmt.Errorf("cacheview: block %d has refcount %d but %d owners", b.ID, b.Ref, len(b.Seqs))
		}
		if b.Ref > 0 && len(b.Tokens) != b.Filled {
			return fmt.Errorf("cacheview: block %d has %d slots filled but %d tokens", b.ID, b.Filled, len(b.Tokens))
		}
		if len(b.Text) != len(b.Tokens) {
			return fmt.Errorf("cacheview: block %d has %d tokens but %d texts", b.ID, len(b.Tokens), len(b.Text))
		}
	}
	s := v.Stats
	if count[kvcache.StateFree] != s.BlocksFree || count[kvcache.StateCached] != s.BlocksCached ||
		count[kvcache.StateUsed]+count[kvcache.StateShared] != s.BlocksUsed || count[kvcache.StateShared] != s.BlocksShared {
		return fmt.Errorf("cacheview: block states %v disagree with the statistics %+v", count, s)
	}
	for _, q := range v.Sequences {
		for _, id := range q.Table {
			if id == kvcache.Hole {
				continue
			}
			if id < 0 || id >= len(v.Blocks) {
				return fmt.Errorf("cacheview: seq %d holds block %d of %d", q.ID, id, len(v.Blocks))
			}
			found := false
			for _, o := range v.Blocks[id].Seqs {
				found = found || o == q.ID
			}
			if !found {
				return fmt.Errorf("cacheview: seq %d holds block %d, which does not list it as an owner", q.ID, id)
			}
		}
	}
	return nil
}
