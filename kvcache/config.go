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
//
// # Cache groups
//
// A model whose layers attend differently (Gemma 2 and 3: sliding layers beside global
// ones) has several cache groups (Config.Groups): the layers that share a window form a
// group, and each group keeps its own block table per sequence, drawn from the one pool.
// As in vLLM's hybrid allocator, every group has the same number of layers — each kind of
// layer is split into groups of gcd(layer counts) layers (GroupLayers) — so a block always
// holds BlockLayers() layers × BlockSize tokens and its size stays one number, whichever
// group uses it. Gemma 3 1B's 22 sliding and 4 global layers make 11 sliding groups and 2
// full ones of 2 layers each. Per token and per group the formula is then
//
//	bytes per token of group g = 2 · layers_g · kv_heads · head_dim · bytes_per_element
//
// and a sliding group holds only the blocks covering its window (Slide releases the rest),
// while a full group holds every block of the sequence. Prefix sharing, copy-on-write,
// eviction and reservation all work per group (add.go, reserve.go); the hit is the longest
// prefix every group can serve. Without Groups the pool is one group of every layer and
// behaves exactly as a pool always has.
package kvcache

import (
	"fmt"
	"slices"

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
	// Groups, when not nil, are the cache groups of a model whose layers attend over
	// different windows: every layer in exactly one group, every group the same number of
	// layers (see the package documentation and GroupLayers). nil: one group of every
	// layer, with no window of its own (a uniformly sliding model releases blocks through
	// Pool.Reclaim, as it always has).
	Groups []Group
}

// Group is one cache group: layers that attend over the same window, with one block table
// per sequence.
type Group struct {
	Layers []int `json:"layers"` // the model layers whose K/V the group's blocks hold, ascending
	Window int   `json:"window"` // the layers' attention window in tokens; 0: full attention
}

// GroupLayers splits layers by their windows (windows[l] is layer l's, 0 for full
// attention) into cache groups of equal size: each kind of layer (one window value) into
// runs of gcd(layer counts of the kinds) layers, in layer order. Full-attention groups come
// first, then sliding ones by window. It returns nil when every layer has the same window:
// a uniform model is one group (Config.Groups nil).
func GroupLayers(windows []int) []Group {
	kinds := map[int][]int{}
	var order []int
	for l, w := range windows {
		if _, ok := kinds[w]; !ok {
			order = append(order, w)
		}
		kinds[w] = append(kinds[w], l)
	}
	if len(order) < 2 {
		return nil
	}
	slices.Sort(order) // 0 (full attention) first, then the windows ascending
	size := 0
	for _, w := range order {
		size = gcd(size, len(kinds[w]))
	}
	var out []Group
	for _, w := range order {
		ls := kinds[w]
		for i := 0; i < len(ls); i += size {
			out = append(out, Group{Layers: slices.Clone(ls[i : i+size]), Window: w})
		}
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// NumGroups is the number of cache groups (1 without Groups).
func (c Config) NumGroups() int { return max(1, len(c.Groups)) }

// GroupWindow is group g's window (0: full attention; always 0 without Groups).
func (c Config) GroupWindow(g int) int {
	if len(c.Groups) == 0 {
		return 0
	}
	return c.Groups[g].Window
}

// GroupLayerList is the model layers of group g.
func (c Config) GroupLayerList(g int) []int {
	if len(c.Groups) == 0 {
		out := make([]int, c.Layers)
		for l := range out {
			out[l] = l
		}
		return out
	}
	return c.Groups[g].Layers
}

// BlockLayers is how many layers one block holds: every layer without Groups, else the
// (common) size of a group.
func (c Config) BlockLayers() int {
	if len(c.Groups) == 0 {
		return c.Layers
	}
	return len(c.Groups[0].Layers)
}

// GroupBlocksAt is how many blocks group g holds for one sequence whose last computed token
// is at position ctx-1, while the step computing it runs: every block of [0, ctx) for a
// full group, and for a sliding group of window W only the blocks covering the window of
// that token, [ctx-W, ctx) (Slide released the earlier ones after the previous step). It is
// the block form of the formula: multiplied by BytesPerBlock and summed over the groups it
// is what the pool holds for the sequence.
func (c Config) GroupBlocksAt(g, ctx int) int {
	if ctx <= 0 {
		return 0
	}
	n := c.BlocksFor(ctx)
	if w := c.GroupWindow(g); w > 0 && ctx > w {
		n -= (ctx - w) / c.BlockSize
	}
	return n
}

// KRowBytes is the size of one token's key row in one layer.
func (c Config) KRowBytes() int { return c.KType.RowBytes(c.KVHeads, c.HeadDim) }

// VRowBytes is the size of one token's value row in one layer.
func (c Config) VRowBytes() int { return c.VType.RowBytes(c.KVHeads, c.HeadDim) }

// BytesPerToken is what one token slot costs across all layers, keys and values, scales
// included: 2 · layers · kv_heads · head_dim · bytes_per_element for unscaled types (with
// groups, the sum of every group's share, before any window releases anything).
func (c Config) BytesPerToken() int64 {
	return int64(c.Layers) * int64(c.KRowBytes()+c.VRowBytes())
}

// GroupBytesPerToken is what one token slot costs in one group: 2 · layers_g · kv_heads ·
// head_dim · bytes_per_element for unscaled types.
func (c Config) GroupBytesPerToken() int64 {
	return int64(c.BlockLayers()) * int64(c.KRowBytes()+c.VRowBytes())
}

// BytesPerBlock is what one block costs: BlockSize · the bytes of a token in the layers a
// block holds (BlockSize · BytesPerToken without groups).
func (c Config) BytesPerBlock() int64 { return int64(c.BlockSize) * c.GroupBytesPerToken() }

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
	if err := c.validateGroups(); err != nil {
		return err
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

// validateGroups checks that the groups cover every layer once, with one size.
func (c Config) validateGroups() error {
	if len(c.Groups) == 0 {
		return nil
	}
	seen := make([]bool, c.Layers)
	size := len(c.Groups[0].Layers)
	for g, gr := range c.Groups {
		switch {
		case len(gr.Layers) != size:
			return fmt.Errorf("kvcache: group %d has %d layers, group 0 has %d: a block holds one number of layers, so every group needs the same", g, len(gr.Layers), size)
		case gr.Window < 0:
			return fmt.Errorf("kvcache: group %d has window %d; want ≥ 0 (0: full attention)", g, gr.Window)
		}
		for _, l := range gr.Layers {
			if l < 0 || l >= c.Layers {
				return fmt.Errorf("kvcache: group %d lists layer %d; the model has layers 0..%d", g, l, c.Layers-1)
			}
			if seen[l] {
				return fmt.Errorf("kvcache: layer %d is in two groups (again in group %d)", l, g)
			}
			seen[l] = true
		}
	}
	if i := slices.Index(seen, false); i >= 0 {
		return fmt.Errorf("kvcache: layer %d is in no group", i)
	}
	return nil
}
