// Package engine turns a model and a paged KV cache into generated text: it owns the cache
// pool, runs prefill and decode steps through the batched forward pass, samples, and — when
// asked — checks every step's logits bit for bit against the cache-free reference.
package engine

import (
	"fmt"

	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// Config sizes an engine.
type Config struct {
	Context     int             // maximum sequence length; 0: the model's, capped at DefaultContext
	BlockSize   int             // token slots per cache block; 0: kvcache.DefaultBlockSize
	CacheBlocks int             // blocks in the pool; 0: enough for Sequences full-context sequences
	Sequences   int             // sequences expected at once, for the default pool size; 0: 1
	Threads     int             // worker threads; 0: one per core
	KType       quant.CacheType // key storage
	VType       quant.CacheType // value storage
}

// DefaultContext caps the context when none is given, so that a model trained for very long
// contexts does not reserve a huge cache by default.
const DefaultContext = 4096

// Engine runs requests on one model with one cache pool. Its parts are read through
// Model, Runner, Pool and Context; New sets them once.
type Engine struct {
	model   *model.Model
	runner  *model.Runner
	pool    *kvcache.Pool
	context int
}

// Model returns the engine's model.
func (e *Engine) Model() *model.Model { return e.model }

// Runner returns the engine's runner: the forward pass and its threads.
func (e *Engine) Runner() *model.Runner { return e.runner }

// Pool returns the engine's KV-cache pool.
func (e *Engine) Pool() *kvcache.Pool { return e.pool }

// Context returns the longest sequence the engine runs, in tokens.
func (e *Engine) Context() int { return e.context }

// New builds an engine: a runner with its threads and a cache pool.
func New(m *model.Model, cfg Config) (*Engine, error) {
	c := m.Config
	ctx := cfg.Context
	if ctx <= 0 {
		ctx = min(c.Context, DefaultContext)
	}
	bs := cfg.BlockSize
	if bs == 0 {
		bs = kvcache.DefaultBlockSize
	}
	if bs < 1 {
		return nil, fmt.Errorf("engine: block size must be ≥ 1, got %d", bs)
	}
	nseq := max(cfg.Sequences, 1)
	groups := CacheGroups(c)
	blocks := cfg.CacheBlocks
	if blocks == 0 {
		// Every group's table covers the whole context (a prompt computed in one step holds
		// all its blocks until the step ends): the same bytes as one table of every layer.
		blocks = nseq * max(1, len(groups)) * ((ctx + bs - 1) / bs)
	}
	if blocks < 1 {
		return nil, fmt.Errorf("engine: the cache needs at least one block, got %d", blocks)
	}
	pool, err := kvcache.NewPool(kvcache.Config{
		Layers: c.Layers, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
		BlockSize: bs, NumBlocks: blocks,
		KType: cfg.KType, VType: cfg.VType,
		ModelID: m.Identity(),
		Groups:  groups,
	})
	if err != nil {
		return nil, err
	}
	return &Engine{model: m, runner: model.NewRunner(m, cfg.Threads), pool: pool, context: ctx}, nil
}

// CacheGroups is the cache groups of a model (kvcache.GroupLayers over its layers'
// windows): nil for a model whose layers all attend alike, which has one group; for Gemma
// 2 and 3, the groups of sliding layers and of global ones.
func CacheGroups(c model.Config) []kvcache.Group {
	windows := make([]int, c.Layers)
	for l := range windows {
		windows[l] = c.Window(l)
	}
	return kvcache.GroupLayers(windows)
}

// reclaim releases the blocks of s that no later token attends over: with a sliding window
// W in every layer, the next token (at position Computed()) reads positions from
// Computed()-W+1 on (kvcache.Pool.Reclaim); with cache groups, each sliding group by its own
// window (kvcache.Pool.Slide). Without a window it does nothing.
func (e *Engine) reclaim(s *kvcache.Sequence) {
	if e.pool.Config().Groups != nil {
		e.pool.Slide(s)
		return
	}
	if w := e.model.Config.ReclaimWindow(); w > 0 {
		e.pool.Reclaim(s, s.Computed()-w+1)
	}
}

// groupWindow is the window by which cache group g releases blocks: the group's own, or,
// for a uniform model (one group), the window every layer shares (0: none).
func (e *Engine) groupWindow(g int) int {
	if e.pool.Config().Groups != nil {
		return e.pool.Config().GroupWindow(g)
	}
	return e.model.Config.ReclaimWindow()
}

// slideWindow is the smallest window by which any cache group releases blocks (0: none).
func (e *Engine) slideWindow() int {
	w := 0
	for g := range e.pool.Groups() {
		if gw := e.groupWindow(g); gw > 0 && (w == 0 || gw < w) {
			w = gw
		}
	}
	return w
}

// Close stops the engine's threads. The model stays open.
func (e *Engine) Close() { e.runner.Close() }
