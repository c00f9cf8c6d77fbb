// Package kvcache is kvref's paged key/value cache: a pool of fixed-size blocks, a block
// table per sequence, automatic prefix sharing through a chain hash of full blocks,
// copy-on-write forks, LRU eviction of unreferenced cached blocks, statistics and an
// invariant checker.
//
// Memory follows one formula: a token slot costs, in every layer, one K row and one V row
// of kv_heads·head_dim elements in the cache's storage type, so for an unscaled type
//
//	bytes per token = 2 · layers · kv_heads · head_dim · bytes_per_element
//
// and for a scaled type the per-row scales are added (see quant.CacheType.RowBytes). A block
// of B slots costs exactly B times that, and the pool allocates exactly that much.
package kvcache

import (
	"fmt"

	"github.com/kvref/kvref/quant"
)

// DefaultBlockSize is the number of token slots per block when none is given (as in vLLM).
const DefaultBlockSize = 16

// Config describes the shape and storage of a cache pool.
type Config struct {
	Layers    int             // transformer layers
	KVHeads   int             // key/value heads per layer
	HeadDim   int             // elements per head
	BlockSize int             // token slots per block (≥ 1)
	NumBlocks int             // blocks in the pool (≥ 1)
	KType     quant.CacheType // storage of keys
	VType     quant.CacheType // storage of values
	// ModelID identifies everything besides the token ids that changes what a block holds:
	// the model's identity, typically a hash of its weights and configuration
	// (model.Model.Identity). It is part of every block hash, so blocks of different models
	// can never be shared. (Not to be confused with a request's cache salt, AddSequence's
	// salt, which separates tenants of one model.)
	ModelID string
}

// KRowBytes is the size of one token's key row in one layer.
func (c Config) KRowBytes() int { return c.KType.RowBytes(c.KVHeads, c.HeadDim) }

// VRowBytes is the size of one token's value row in one layer.
func (c Config) VRowBytes() int { return c.VType.RowBytes(c.KVHeads, c.HeadDim) }

// BytesPerToken is what one token slot costs across all layers, keys and values, scales
// included: 2 · layers · kv_heads · head_dim · bytes_per_element for unscaled types.
func (c Config) BytesPerToken() int64 {
	return int64(c.Layers) * int64(c.KRowBytes()+c.VRowBytes())
}

// BytesPerBlock is what one block costs: BlockSize · BytesPerToken.
func (c Config) BytesPerBlock() int64 { return int64(c.BlockSize) * c.BytesPerToken() }

// Validate checks the configuration and says what to change.
func (c Config) Validate() error {
	switch {
	case c.Layers < 1 || c.KVHeads < 1 || c.HeadDim < 1:
		return fmt.Errorf("kvcache: layers, kv_heads and head_dim must be ≥ 1, got %d, %d, %d", c.Layers, c.KVHeads, c.HeadDim)
	case c.BlockSize < 1:
		return fmt.Errorf("kvcache: block size must be ≥ 1, got %d", c.BlockSize)
	case c.NumBlocks < 1:
		return fmt.Errorf("kvcache: the pool needs at least 1 block, got %d", c.NumBlocks)
	}
	if err := c.KType.Validate(c.KVHeads, c.HeadDim); err != nil {
		return fmt.Errorf("kvcache: key cache type: %w", err)
	}
	if err := c.VType.Validate(c.KVHeads, c.HeadDim); err != nil {
		return fmt.Errorf("kvcache: value cache type: %w", err)
	}
	const maxBytes = 1 << 40
	if c.BytesPerBlock() > maxBytes/int64(c.NumBlocks) {
		return fmt.Errorf("kvcache: %d blocks of %d bytes exceed 1 TiB; use fewer blocks", c.NumBlocks, c.BytesPerBlock())
	}
	return nil
}

// BlocksFor is the number of blocks needed to hold n token slots.
func (c Config) BlocksFor(n int) int { return (n + c.BlockSize - 1) / c.BlockSize }
