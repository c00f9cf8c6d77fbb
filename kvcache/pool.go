package kvcache

import (
	"errors"
	"fmt"
)

// ErrOutOfBlocks is returned (wrapped) when the pool has no free block and nothing
// evictable. The engine can act on it, for example by preempting a sequence. The pool is
// left exactly as it was before the failing call.
var ErrOutOfBlocks = errors.New("kvcache: out of blocks")

// block is the bookkeeping of one block of the pool. Its K/V data lives in Pool.k and Pool.v.
type block struct {
	ref     int     // number of block-table entries pointing here
	filled  int     // slots holding committed K/V (0..BlockSize)
	hashed  bool    // full, and registered in the prefix index under hash
	hash    Hash    // chain hash when hashed
	tokens  []int32 // the token ids the block holds, stored when hashed, compared on every hit
	inLRU   bool    // ref == 0 and hashed: cached and evictable
	prev    int     // LRU neighbours (-1 for none)
	next    int
	touched uint64 // logical time of the last use, for display
}

// Pool is a fixed set of KV blocks shared by many sequences. It is not safe for concurrent
// mutation; the engine serialises calls. Reading rows while no mutation runs is safe.
type Pool struct {
	cfg     Config
	kRow    int      // bytes of one K row
	vRow    int      // bytes of one V row
	k, v    [][]byte // per layer: NumBlocks·BlockSize rows
	blocks  []block
	free    []int // free block ids, used as a stack
	lruHead int   // least recently used evictable block, -1 when none
	lruTail int
	lruLen  int
	index   map[Hash]int
	root    Hash // parent hash of every sequence's first block
	seqs    map[int]*Sequence
	nextSeq int
	clock   uint64
	stats   counters
}

// NewPool allocates a pool for cfg.
func NewPool(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pool{
		cfg:     cfg,
		kRow:    cfg.KRowBytes(),
		vRow:    cfg.VRowBytes(),
		blocks:  make([]block, cfg.NumBlocks),
		free:    make([]int, 0, cfg.NumBlocks),
		lruHead: -1,
		lruTail: -1,
		index:   make(map[Hash]int),
		seqs:    make(map[int]*Sequence),
		root:    rootHash(cfg),
	}
	slots := cfg.NumBlocks * cfg.BlockSize
	p.k = make([][]byte, cfg.Layers)
	p.v = make([][]byte, cfg.Layers)
	for l := range cfg.Layers {
		p.k[l] = make([]byte, slots*p.kRow)
		p.v[l] = make([]byte, slots*p.vRow)
	}
	for id := cfg.NumBlocks - 1; id >= 0; id-- {
		p.blocks[id].prev, p.blocks[id].next = -1, -1
		p.free = append(p.free, id)
	}
	return p, nil
}

// Config returns the pool's configuration.
func (p *Pool) Config() Config { return p.cfg }

// AllocatedBytes is the size of the pool's K/V storage: NumBlocks · BytesPerBlock.
func (p *Pool) AllocatedBytes() int64 {
	var n int64
	for l := range p.k {
		n += int64(len(p.k[l]) + len(p.v[l]))
	}
	return n
}

// KRow returns the stored key row of one slot of one block in one layer.
func (p *Pool) KRow(layer, blockID, slot int) []byte {
	i := (blockID*p.cfg.BlockSize + slot) * p.kRow
	return p.k[layer][i : i+p.kRow : i+p.kRow]
}

// VRow returns the stored value row of one slot of one block in one layer.
func (p *Pool) VRow(layer, blockID, slot int) []byte {
	i := (blockID*p.cfg.BlockSize + slot) * p.vRow
	return p.v[layer][i : i+p.vRow : i+p.vRow]
}

// WriteKV quantizes k and v (kv_heads·head_dim values each) into a slot of one layer.
func (p *Pool) WriteKV(layer, blockID, slot int, k, v []float32) {
	p.cfg.KType.Encode(p.KRow(layer, blockID, slot), k, p.cfg.KVHeads, p.cfg.HeadDim)
	p.cfg.VType.Encode(p.VRow(layer, blockID, slot), v, p.cfg.KVHeads, p.cfg.HeadDim)
}

// available is how many blocks an allocation could obtain: free plus evictable.
func (p *Pool) available() int { return len(p.free) + p.lruLen }

// allocate takes a free block, evicting the least recently used cached block when the free
// list is empty. Callers check available() first so that multi-block operations are atomic.
func (p *Pool) allocate() (int, error) {
	var id int
	switch {
	case len(p.free) > 0:
		id = p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
	case p.lruHead >= 0:
		id = p.lruHead
		p.lruRemove(id)
		p.unindex(id)
		p.stats.evictions++
	default:
		return -1, fmt.Errorf("%w: all %d blocks are in use by live sequences", ErrOutOfBlocks, p.cfg.NumBlocks)
	}
	b := &p.blocks[id]
	b.ref = 1
	b.filled = 0
	p.clock++
	b.touched = p.clock
	return id, nil
}

// release drops one reference to a block. An unreferenced full block stays in the prefix
// index as cached and evictable; any other unreferenced block returns to the free list.
func (p *Pool) release(id int) {
	b := &p.blocks[id]
	b.ref--
	if b.ref > 0 {
		return
	}
	if b.hashed {
		p.lruPush(id)
		return
	}
	b.filled = 0
	p.free = append(p.free, id)
}

// unindex removes a block from the prefix index.
func (p *Pool) unindex(id int) {
	b := &p.blocks[id]
	if b.hashed && p.index[b.hash] == id {
		delete(p.index, b.hash)
	}
	b.hashed = false
	b.hash = Hash{}
	b.tokens = nil
}

func (p *Pool) lruPush(id int) {
	b := &p.blocks[id]
	b.inLRU = true
	b.prev, b.next = p.lruTail, -1
	if p.lruTail >= 0 {
		p.blocks[p.lruTail].next = id
	} else {
		p.lruHead = id
	}
	p.lruTail = id
	p.lruLen++
}

func (p *Pool) lruRemove(id int) {
	b := &p.blocks[id]
	if b.prev >= 0 {
		p.blocks[b.prev].next = b.next
	} else {
		p.lruHead = b.next
	}
	if b.next >= 0 {
		p.blocks[b.next].prev = b.prev
	} else {
		p.lruTail = b.prev
	}
	b.prev, b.next, b.inLRU = -1, -1, false
	p.lruLen--
}

// copyBlock copies the first n slots of every layer's K and V from src to dst.
func (p *Pool) copyBlock(dst, src, n int) {
	bs := p.cfg.BlockSize
	for l := range p.k {
		copy(p.k[l][dst*bs*p.kRow:(dst*bs+n)*p.kRow], p.k[l][src*bs*p.kRow:(src*bs+n)*p.kRow])
		copy(p.v[l][dst*bs*p.vRow:(dst*bs+n)*p.vRow], p.v[l][src*bs*p.vRow:(src*bs+n)*p.vRow])
	}
}
