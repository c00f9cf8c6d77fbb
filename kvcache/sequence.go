package kvcache

// Sequence is a token list plus a block table. Tokens [0, Computed()) have their K/V in the
// cache; later tokens (a prompt's uncached tail, a just-sampled token) are waiting to be
// computed. Slot of position pos: block Table()[pos/B], slot pos%B.
type Sequence struct {
	id       int
	tokens   []int
	table    []int
	computed int
	hashes   []Hash // hashes of the sequence's full blocks so far, in order
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

// Table returns the block table (do not modify).
func (s *Sequence) Table() []int { return s.table }

// Append adds tokens (for example a sampled one) that will be computed later.
func (s *Sequence) Append(tokens ...int) { s.tokens = append(s.tokens, tokens...) }

// Slot returns the block and slot holding position pos's K/V.
func (s *Sequence) Slot(pos int) (blockID, slot int) {
	bs := s.pool.cfg.BlockSize
	return s.table[pos/bs], pos % bs
}
