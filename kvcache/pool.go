package kvcache

import (
	"errors"
	"fmt"

	"github.com/kvref/kvref/internal/pages"
)

// ErrOutOfBlocks is returned (wrapped) when the pool has no free block and nothing
// evictable. The engine can act on it, for example by preempting a sequence. The pool is
// left exactly as it was before the failing call.
var ErrOutOfBlocks = errors.New("kvcache: out of blocks")

// PoolTooLargeError is NewPool's error for a pool whose K/V storage is larger than the
// memory this machine has available: the pool maps all of it when it is made, and a
// process asking for more than there is dies (the Go runtime's fatal out-of-memory error,
// or the kernel's OOM killer) instead of failing.
type PoolTooLargeError struct {
	Blocks     int    // the blocks asked for
	BlockBytes int64  // the K/V bytes of one block (Config.BytesPerBlock)
	Available  int64  // the bytes available
	Source     string // where Available comes from (pages.SourceMemAvailable, pages.SourceCgroup)
}

func (e *PoolTooLargeError) Error() string {
	need := int64(e.Blocks) * e.BlockBytes
	return fmt.Sprintf("kvcache: a pool of %d blocks of %d B needs %d B, more than the %d B this machine has available (%s); "+
		"at most %d blocks fit",
		e.Blocks, e.BlockBytes, need, e.Available, e.Source, e.Available/max(e.BlockBytes, 1))
}

// availableMemory is how NewPool learns the memory available (pages.AvailableMemory: Linux's
// MemAvailable, or a memory cgroup's room; where neither can be read, no check is made); a
// variable so tests can set it.
var availableMemory = pages.AvailableMemory

// block is the bookkeeping of one block of the pool. Its K/V data lives in Pool.k and Pool.v
// (storage.go).
type block struct {
	ref    int     // number of block-table entries pointing here
	filled int     // slots holding committed K/V (0..BlockSize)
	hashed bool    // full, and registered in the prefix index under hash
	hash   Hash    // chain hash when hashed
	tokens []int32 // the token ids the block holds, stored when hashed, compared on every hit
	inLRU  bool    // ref == 0 and hashed: cached and evictable
	group  int     // the cache group whose layers the block holds (while in use or cached)
	prev   int     // LRU neighbours (-1 for none)
	next   int
}

// Pool is a fixed set of KV blocks shared by many sequences. It is not safe for concurrent
// mutation; the engine serialises calls. Reading rows while no mutation runs is safe.
//
// Its verbs, each in its own file: AddSequence (add.go), Reserve (reserve.go), Commit
// (commit.go), Fork (fork.go), Free and Flush (free.go). The K/V storage is storage.go, the
// eviction order lru.go.
type Pool struct {
	cfg      Config
	kRow     int      // bytes of one K row
	vRow     int      // bytes of one V row
	k, v     [][]byte // per layer: NumBlocks·BlockSize rows
	blocks   []block
	free     []int // free block ids, used as a stack
	lruHead  int   // least recently used evictable block, -1 when none
	lruTail  int
	lruLen   int
	index    map[indexKey]int
	groups   int   // cache groups (Config.NumGroups)
	layerAt  []int // per model layer: its place among the layers a block holds (storage row set)
	layerGrp []int // per model layer: its group
	root     Hash  // parent hash of every sequence's first block
	seqs     map[int]*Sequence
	nextSeq  int
	stats    counters
	observer func(Event)
}

// NewPool allocates a pool for cfg, and maps its K/V storage now. A pool larger than the
// memory this machine has available is a *PoolTooLargeError.
func NewPool(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if avail, source, err := availableMemory(); err == nil && int64(cfg.NumBlocks) > avail/max(cfg.BytesPerBlock(), 1) {
		return nil, &PoolTooLargeError{Blocks: cfg.NumBlocks, BlockBytes: cfg.BytesPerBlock(), Available: avail, Source: source}
	}
	p := &Pool{
		cfg:     cfg,
		kRow:    cfg.KRowBytes(),
		vRow:    cfg.VRowBytes(),
		blocks:  make([]block, cfg.NumBlocks),
		free:    make([]int, 0, cfg.NumBlocks),
		lruHead: -1,
		lruTail: -1,
		index:   make(map[indexKey]int),
		groups:  cfg.NumGroups(),
		stats:   counters{groupReclaimed: make([]int64, cfg.NumGroups())},
		seqs:    make(map[int]*Sequence),
		root:    rootHash(cfg),
	}
	p.layerAt = make([]int, cfg.Layers)
	p.layerGrp = make([]int, cfg.Layers)
	for g := range p.groups {
		for j, l := range cfg.GroupLayerList(g) {
			p.layerAt[l], p.layerGrp[l] = j, g
		}
	}
	p.allocateStorage()
	for id := cfg.NumBlocks - 1; id >= 0; id-- {
		p.blocks[id].prev, p.blocks[id].next = -1, -1
		p.free = append(p.free, id)
	}
	return p, nil
}

// Config returns the pool's configuration.
func (p *Pool) Config() Config { return p.cfg }

// indexKey is a prefix-index entry: a chain hash within one cache group (the blocks of
// different groups for the same tokens hold different layers).
type indexKey struct {
	group int
	hash  Hash
}

// Groups is the number of cache groups (1 for a uniform model).
func (p *Pool) Groups() int { return p.groups }

// LayerGroup is the cache group holding layer l's K/V.
func (p *Pool) LayerGroup(l int) int { return p.layerGrp[l] }

// Available is the number of blocks an allocation can obtain: free plus cached-evictable.
func (p *Pool) Available() int { return len(p.free) + p.lruLen }

// allocate takes a free block for sequence seq, evicting the least recently used cached block
// when the free list is empty (recorded in r when not nil). Callers check Available() first
// so that multi-block operations are atomic.
func (p *Pool) allocate(seq, group int, r *Reservation) (int, error) {
	var id int
	switch {
	case len(p.free) > 0:
		id = p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
	case p.lruHead >= 0:
		id = p.lruHead
		h := p.blocks[id].hash
		p.lruRemove(id)
		p.unindex(id)
		p.stats.evictions++
		e := p.event(Evicted, seq, id)
		e.Hash, e.Group = h, p.blocks[id].group
		if r != nil {
			r.Evictions = append(r.Evictions, e)
		}
		p.emit(e)
	default:
		return -1, fmt.Errorf("%w: all %d blocks are in use by live sequences", ErrOutOfBlocks, p.cfg.NumBlocks)
	}
	b := &p.blocks[id]
	b.ref = 1
	b.filled = 0
	b.group = group
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
	if k := (indexKey{b.group, b.hash}); b.hashed && p.index[k] == id {
		delete(p.index, k)
	}
	b.hashed = false
	b.hash = Hash{}
	b.tokens = nil
}
