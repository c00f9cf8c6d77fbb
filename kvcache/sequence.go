package kvcache

// Sequence is a token list plus a block table per cache group. Tokens [0, Computed()) have
// their K/V in the cache; later tokens (a prompt's uncached tail, a just-sampled token) are
// waiting to be computed. Slot of position pos in group g: block GroupTable(g)[pos/B], slot
// pos%B. A uniform model has one group, whose table is Table().
type Sequence struct {
	id       int
	tokens   []int
	tables   [][]int // per cache group
	computed int
	hashes   []Hash // hashes of the sequence's full blocks so far, in order (one chain for every group)
	root     Hash   // parent hash of the first block: the pool's root, salted per sequence
	pool     *Pool
}

// ID is the sequence's number in its pool.
func (s *Sequence) ID() int { return s.id }

// Tokens returns the sequence's tokens (do not modify).
func (s *Sequence) Tokens() []int { return s.tokens }

// Len is the number of tokens.
func (s *Sequence) Len() int { return len(s.tokens) }

// Computed is the number of leading tokens whose K/V are in the cache.
func (s *Sequence) Computed() int { return s.computed }

// Table returns the block table of group 0, the only one of a uniform model (do not
// modify).
func (s *Sequence) Table() []int { return s.tables[0] }

// GroupTable returns the block table of cache group g (do not modify).
func (s *Sequence) GroupTable(g int) []int { return s.tables[g] }

// LayerTable returns the block table of the group holding layer l (do not modify).
func (s *Sequence) LayerTable(l int) []int { return s.tables[s.pool.layerGrp[l]] }

// Append adds tokens (for example a sampled one) that will be computed later.
func (s *Sequence) Append(tokens ...int) { s.tokens = append(s.tokens, tokens...) }

// Slot returns the block and slot holding position pos's K/V in group 0.
func (s *Sequence) Slot(pos int) (blockID, slot int) { return s.GroupSlot(0, pos) }

// GroupSlot returns the block and slot holding position pos's K/V in group g.
func (s *Sequence) GroupSlot(g, pos int) (blockID, slot int) {
	bs := s.pool.cfg.BlockSize
	return s.tables[g][pos/bs], pos % bs
}

// LayerSlot returns the block and slot holding position pos's K/V in layer l.
func (s *Sequence) LayerSlot(l, pos int) (blockID, slot int) {
	return s.GroupSlot(s.pool.layerGrp[l], pos)
}
