package kvcache

// counters are the pool's running totals.
type counters struct {
	promptTokens    int64
	prefixHitTokens int64
	evictions       int64
	cowCopies       int64
	reclaimed       int64
	groupReclaimed  []int64 // per cache group
}

// Stats is a snapshot of the pool: where its blocks are and what sharing has saved.
type Stats struct {
	BlockSize       int   `json:"block_size"`
	BlocksTotal     int   `json:"blocks_total"`
	BlocksUsed      int   `json:"blocks_used"`   // referenced by at least one sequence
	BlocksCached    int   `json:"blocks_cached"` // unreferenced, kept for prefix hits, evictable
	BlocksFree      int   `json:"blocks_free"`
	BlocksShared    int   `json:"blocks_shared"` // referenced by two or more block-table entries
	BytesPerToken   int64 `json:"bytes_per_token"`
	BytesPerBlock   int64 `json:"bytes_per_block"`
	BytesInUse      int64 `json:"bytes_in_use"`  // BlocksUsed · BytesPerBlock
	BytesTotal      int64 `json:"bytes_total"`   // what the pool allocated
	TokensStored    int64 `json:"tokens_stored"` // committed slots in used blocks
	UnusedSlots     int64 `json:"unused_slots"`  // slots of used blocks holding nothing (internal fragmentation)
	PromptTokens    int64 `json:"prompt_tokens"`
	PrefixHitTokens int64 `json:"prefix_hit_tokens"`
	Evictions       int64 `json:"evictions"`
	CowCopies       int64 `json:"cow_copies"`
	BlocksReclaimed int64 `json:"blocks_reclaimed"` // released because they fell out of an attention window
	Sequences       int   `json:"sequences"`
	// Groups are the cache groups' own counts, for a pool with groups (Config.Groups): a
	// uniform model's pool has none.
	Groups []GroupStats `json:"groups,omitempty"`
}

// GroupStats is one cache group's share of the pool.
type GroupStats struct {
	Group           int   `json:"group"`
	Layers          []int `json:"layers"`           // the model layers the group's blocks hold
	Window          int   `json:"window"`           // 0: full attention
	BlocksUsed      int   `json:"blocks_used"`      // referenced by a table of the group
	BlocksCached    int   `json:"blocks_cached"`    // unreferenced, kept for prefix hits of the group
	BlocksShared    int   `json:"blocks_shared"`    // referenced by two or more table entries
	BlocksReclaimed int64 `json:"blocks_reclaimed"` // released by the window (always 0 for a full group)
	TokensStored    int64 `json:"tokens_stored"`    // committed slots in used blocks
}

// Stats returns the current statistics.
func (p *Pool) Stats() Stats {
	st := Stats{
		BlockSize:       p.cfg.BlockSize,
		BlocksTotal:     p.cfg.NumBlocks,
		BlocksCached:    p.lruLen,
		BlocksFree:      len(p.free),
		BytesPerToken:   p.cfg.BytesPerToken(),
		BytesPerBlock:   p.cfg.BytesPerBlock(),
		BytesTotal:      p.AllocatedBytes(),
		PromptTokens:    p.stats.promptTokens,
		PrefixHitTokens: p.stats.prefixHitTokens,
		Evictions:       p.stats.evictions,
		CowCopies:       p.stats.cowCopies,
		BlocksReclaimed: p.stats.reclaimed,
		Sequences:       len(p.seqs),
	}
	if len(p.cfg.Groups) > 0 {
		st.Groups = make([]GroupStats, p.groups)
		for g := range st.Groups {
			st.Groups[g] = GroupStats{Group: g, Layers: p.cfg.GroupLayerList(g), Window: p.cfg.GroupWindow(g), BlocksReclaimed: p.stats.groupReclaimed[g]}
		}
	}
	for i := range p.blocks {
		b := &p.blocks[i]
		if st.Groups != nil {
			gs := &st.Groups[b.group]
			switch {
			case b.ref > 0:
				gs.BlocksUsed++
				gs.TokensStored += int64(b.filled)
				if b.ref > 1 {
					gs.BlocksShared++
				}
			case b.inLRU:
				gs.BlocksCached++
			}
		}
		if b.ref == 0 {
			continue
		}
		st.BlocksUsed++
		if b.ref > 1 {
			st.BlocksShared++
		}
		st.TokensStored += int64(b.filled)
		st.UnusedSlots += int64(p.cfg.BlockSize - b.filled)
	}
	st.BytesInUse = int64(st.BlocksUsed) * st.BytesPerBlock
	return st
}

// BlockState describes one block for display.
type BlockState struct {
	ID     int    `json:"id"`
	Ref    int    `json:"ref"`
	Filled int    `json:"filled"`
	Cached bool   `json:"cached"` // unreferenced and evictable
	Hashed bool   `json:"hashed"`
	Hash   string `json:"hash,omitempty"`
	Group  int    `json:"group,omitempty"` // the cache group whose layers it holds (in use or cached)
}

// Blocks describes every block of the pool, in id order.
func (p *Pool) Blocks() []BlockState {
	out := make([]BlockState, len(p.blocks))
	for i := range p.blocks {
		b := &p.blocks[i]
		out[i] = BlockState{ID: i, Ref: b.ref, Filled: b.filled, Cached: b.inLRU, Hashed: b.hashed}
		if b.ref > 0 || b.inLRU {
			out[i].Group = b.group
		}
		if b.hashed {
			out[i].Hash = b.hash.String()
		}
	}
	return out
}
