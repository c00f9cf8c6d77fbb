// Package plan is the KV cache arithmetic of kvref as a calculator: how many bytes one token
// costs, how many full-context sequences fit in the memory left after the weights, and how
// GQA, the cache's storage type and prefix sharing change that number. Every figure
// follows the one formula kvref's cache is built on,
//
//	bytes per token = 2 · layers · kv_heads · head_dim · bytes_per_element
//
// with the per-row scales of scaled types added exactly as the cache stores them:
// layers × (K row bytes + V row bytes), rows sized by quant.CacheType.RowBytes. This equals
// kvcache.Config.BytesPerToken for every cache type (tested).
//
// Sequences are counted the way the paged cache allocates: a sequence of C tokens holds
// ceil(C/B) blocks of B slots, and the memory left after the weights holds
// floor(left / block bytes) blocks. With a sliding window W in every layer a sequence holds
// at most the blocks its last W positions span, min(ceil(C/B), ceil(W/B)+1): the window
// seldom starts on a block boundary.
package plan

import (
	"errors"
	"fmt"

	"github.com/kvref/kvref/quant"
)

// DefaultContext is the context planned for a shape that gives none (shape flags or
// parameters without a context), by kvref plan and the page's "price it" panel alike.
const DefaultContext = 4096

// Input is one planning question.
type Input struct {
	Shape     Shape
	KType     quant.CacheType // storage of keys
	VType     quant.CacheType // storage of values
	Context   int             // tokens per full sequence
	BlockSize int             // token slots per cache block
	Memory    int64           // bytes for weights and cache together
	Weights   int64           // bytes the weights take
	// SharedPrefixes are the prefix lengths (tokens, each in [0, Context)) of the
	// shared-prefix comparison; 0 is the no-sharing baseline.
	SharedPrefixes []int
}

// Report is the answer to an Input.
type Report struct {
	Input
	KRowBytes     int64 // one token's key row in one layer
	VRowBytes     int64 // one token's value row in one layer
	BytesPerToken int64 // Layers · (KRowBytes + VRowBytes)
	// BytesPerSequence is min(Context, Window) · BytesPerToken: a full sequence without
	// paging (Window when the model slides).
	BytesPerSequence  int64
	BlocksPerSequence int   // ceil(Context / BlockSize), capped at ceil(Window/BlockSize)+1 for a sliding window
	BytesPerBlock     int64 // BlockSize · BytesPerToken
	// BlockBytesPerSequence is BlocksPerSequence · BytesPerBlock: what a full sequence
	// really holds in the paged cache (its last block may be partly empty).
	BlockBytesPerSequence int64
	Left                  int64 // Memory − Weights (never negative in a report without error)
	CacheBlocks           int64 // floor(Left / BytesPerBlock): blocks the memory left can hold
	MaxSequences          int64 // floor(CacheBlocks / BlocksPerSequence)
	// WithoutGQA is the same model with one KV head per query head, weights unchanged;
	// nil when the number of query heads is unknown.
	WithoutGQA *Variant
	// CacheTypes has one entry per quant.CacheType, K and V both of that type.
	CacheTypes []Variant
	// SharedPrefixes has one entry per Input.SharedPrefixes, in the same order.
	SharedPrefixes []SharedPrefix
	// Groups, for a shape with sliding layers beside full ones (Shape.Hybrid), are its
	// kinds of layer, full first (groups.go). BytesPerSequence is then their sum with the
	// window, BytesPerBlock a block of one group's layers, and BlocksPerSequence every
	// group's blocks at the context.
	Groups []GroupPlan
}

// Variant is the same plan with another KV head count or cache type.
type Variant struct {
	KVHeads               int
	KType, VType          quant.CacheType
	BytesPerToken         int64
	BlockBytesPerSequence int64
	MaxSequences          int64
	Err                   error // the type cannot store this shape (the block types need kv_heads·head_dim % 32 == 0)
}

// SharedPrefix is the plan when every sequence starts with the same Tokens-token prefix.
// The paged cache shares full blocks only, so SharedBlocks = floor(Tokens / BlockSize)
// blocks are stored once and every sequence holds the other OwnBlocks itself (a partly
// filled last prefix block is private to each sequence). With a sliding window shorter than
// the context, full-length sequences have slid past the prefix: SharedBlocks is 0.
type SharedPrefix struct {
	Tokens       int
	SharedBlocks int
	OwnBlocks    int   // BlocksPerSequence − SharedBlocks
	MaxSequences int64 // floor((CacheBlocks − SharedBlocks) / OwnBlocks), 0 if the prefix does not fit
}

// NoRoomError says that the weights alone need more than the memory.
type NoRoomError struct {
	Memory, Weights int64
}

// Error says how much the weights need and how much memory there is.
func (e *NoRoomError) Error() string {
	return fmt.Sprintf("plan: the weights need %d bytes but the memory is %d bytes: nothing is left for the KV cache", e.Weights, e.Memory)
}

// BytesPerToken returns layers · (K row bytes + V row bytes) for kvHeads heads of headDim
// values: 2 · layers · kv_heads · head_dim · bytes_per_element when K and V are one
// unscaled type. It reports an error when a type cannot store rows of that shape.
func BytesPerToken(layers, kvHeads, headDim int, k, v quant.CacheType) (int64, error) {
	if err := k.Validate(kvHeads, headDim); err != nil {
		return 0, fmt.Errorf("key cache: %w", err)
	}
	if err := v.Validate(kvHeads, headDim); err != nil {
		return 0, fmt.Errorf("value cache: %w", err)
	}
	return int64(layers) * int64(k.RowBytes(kvHeads, headDim)+v.RowBytes(kvHeads, headDim)), nil
}

// Compute answers in. When the weights do not fit in the memory it returns the report
// with everything but the sequence counts filled in, and a *NoRoomError.
func Compute(in Input) (Report, error) {
	if err := in.Shape.Validate(); err != nil {
		return Report{}, err
	}
	switch {
	case in.Context < 1 || in.Context > maxContext:
		return Report{}, fmt.Errorf("plan: context must be in [1, %d] tokens, got %d", maxContext, in.Context)
	case in.BlockSize < 1 || in.BlockSize > maxContext:
		return Report{}, fmt.Errorf("plan: block size must be in [1, %d] tokens, got %d", maxContext, in.BlockSize)
	case in.Memory < 0 || in.Weights < 0:
		return Report{}, fmt.Errorf("plan: memory and weights must not be negative, got %d and %d bytes", in.Memory, in.Weights)
	}
	for _, n := range in.SharedPrefixes {
		if n < 0 || n >= in.Context {
			return Report{}, fmt.Errorf("plan: a shared prefix of %d tokens must be in [0, %d): every %d-token sequence needs at least one token of its own",
				n, in.Context, in.Context)
		}
	}
	s := in.Shape
	bpt, err := BytesPerToken(s.Layers, s.KVHeads, s.HeadDim, in.KType, in.VType)
	if err != nil {
		return Report{}, fmt.Errorf("plan: %w", err)
	}
	r := Report{
		Input:             in,
		KRowBytes:         int64(in.KType.RowBytes(s.KVHeads, s.HeadDim)),
		VRowBytes:         int64(in.VType.RowBytes(s.KVHeads, s.HeadDim)),
		BytesPerToken:     bpt,
		BytesPerSequence:  int64(in.Context) * bpt,
		BlocksPerSequence: blocksFor(in.Context, in.BlockSize),
		BytesPerBlock:     int64(in.BlockSize) * bpt,
	}
	if w := s.Window; w > 0 && w < in.Context {
		r.BytesPerSequence = int64(w) * bpt
		r.BlocksPerSequence = min(r.BlocksPerSequence, blocksFor(w, in.BlockSize)+1)
	}
	if r.Groups = groupPlans(s, in.Context, in.BlockSize, r.KRowBytes+r.VRowBytes); r.Groups != nil {
		r.BytesPerSequence, r.BlocksPerSequence = 0, 0
		for _, g := range r.Groups {
			r.BytesPerSequence += g.Bytes
			r.BlocksPerSequence += g.Blocks
		}
		r.BytesPerBlock = int64(in.BlockSize) * int64(s.blockLayers()) * (r.KRowBytes + r.VRowBytes)
	}
	r.BlockBytesPerSequence = int64(r.BlocksPerSequence) * r.BytesPerBlock

	var noRoom error
	if in.Weights > in.Memory {
		noRoom = &NoRoomError{Memory: in.Memory, Weights: in.Weights}
	} else {
		r.Left = in.Memory - in.Weights
	}
	r.CacheBlocks = r.Left / r.BytesPerBlock
	r.MaxSequences = r.CacheBlocks / int64(r.BlocksPerSequence)

	if s.Heads > 0 {
		v := r.variant(s.Heads, in.KType, in.VType)
		r.WithoutGQA = &v
	}
	for _, t := range quant.CacheTypes() {
		r.CacheTypes = append(r.CacheTypes, r.variant(s.KVHeads, t, t))
	}
	sliding := s.Window > 0 && s.Window < in.Context
	for _, n := range in.SharedPrefixes {
		p := SharedPrefix{Tokens: n, SharedBlocks: n / in.BlockSize}
		if r.Groups != nil {
			// The full groups share the prefix's blocks; the sliding ones have slid
			// past it at full length (unless the window covers the whole context).
			p.SharedBlocks = 0
			for _, g := range r.Groups {
				if g.Window == 0 || !sliding {
					p.SharedBlocks += g.Groups * (n / in.BlockSize)
				}
			}
		} else if sliding {
			// Every sequence slides past the prefix and releases its blocks: at full
			// length nothing is shared any more.
			p.SharedBlocks = 0
		}
		p.OwnBlocks = r.BlocksPerSequence - p.SharedBlocks
		if free := r.CacheBlocks - int64(p.SharedBlocks); free > 0 {
			p.MaxSequences = free / int64(p.OwnBlocks)
		}
		r.SharedPrefixes = append(r.SharedPrefixes, p)
	}
	return r, noRoom
}

// variant plans the same memory with kvHeads KV heads stored as k and v.
func (r *Report) variant(kvHeads int, k, v quant.CacheType) Variant {
	out := Variant{KVHeads: kvHeads, KType: k, VType: v}
	bpt, err := BytesPerToken(r.Shape.Layers, kvHeads, r.Shape.HeadDim, k, v)
	if err != nil {
		out.Err = err
		return out
	}
	out.BytesPerToken = bpt
	// A block holds blockLayers of the Layers layers (all of them without cache groups).
	block := int64(r.BlockSize) * bpt / int64(r.Shape.Layers) * int64(r.Shape.blockLayers())
	out.BlockBytesPerSequence = int64(r.BlocksPerSequence) * block
	out.MaxSequences = r.Left / block / int64(r.BlocksPerSequence)
	return out
}

// blocksFor is the number of blocks of size b that hold n tokens: ceil(n / b).
func blocksFor(n, b int) int { return (n + b - 1) / b }

// IsNoRoom reports whether err says the weights leave no memory for the cache.
func IsNoRoom(err error) bool {
	var e *NoRoomError
	return errors.As(err, &e)
}

// ElementBytes is the size of one stored value of an unscaled cache type (f32: 4, f16 and
// bf16: 2, fp8-e5m2: 1); ok is false for the scaled types (int8, fp8-e4m3 and the block types q8_0, q4_0, ...), whose
// rows carry scales besides the values.
func ElementBytes(t quant.CacheType) (n int, ok bool) {
	value, scale := t.ValueBytes()
	return value, value > 0 && scale == 0
}
