package plan

import (
	"fmt"
)

// Shape is what the planner needs to know about a model. Layers, KVHeads and HeadDim
// decide the KV cache; Heads, Dim, Hidden, Vocab, Tied and QKVBias only decide the
// parameter count (and so the weights estimate) and may be zero when unknown.
type Shape struct {
	Layers  int  // transformer blocks (config.json num_hidden_layers)
	Heads   int  // query heads (num_attention_heads); 0: unknown
	KVHeads int  // key/value heads (num_key_value_heads)
	HeadDim int  // width of one head (head_dim, or hidden_size / num_attention_heads)
	Dim     int  // embedding width (hidden_size); 0: unknown
	Hidden  int  // feed-forward width (intermediate_size); 0: unknown
	Vocab   int  // vocabulary size (vocab_size); 0: unknown
	Context int  // trained context length (max_position_embeddings); 0: unknown
	Tied    bool // the output projection is the embedding (tie_word_embeddings)
	QKVBias bool // the q, k and v projections have biases (Qwen2)
	// Window is the sliding attention window of every layer (Mistral's sliding_window), or,
	// with SlidingLayers, of those layers: a sequence then holds at most the blocks of its
	// last Window positions in them, since kvref releases the blocks the window has left.
	// 0: full attention.
	Window int
	// SlidingLayers, when between 0 and Layers, is how many layers attend over Window while
	// the others attend over everything (Gemma 2 and 3, gpt-oss): the cache then has groups
	// (groups.go). 0: every layer slides when Window is set.
	SlidingLayers int
	// Family names a block layout the parameter count must know: "gemma2" and "gemma3" add
	// norms after attention and after the MLP (and Gemma 3 per-head q/k norms). "": Llama's.
	Family string
}

// Limits on a shape, far above any published model, that keep every byte count the
// planner computes well inside an int64.
const (
	maxLayers  = 4096
	maxRow     = 1 << 20 // heads·head_dim and kv_heads·head_dim
	maxWidth   = 1 << 22 // dim and hidden
	maxVocab   = 1 << 24
	maxContext = 1 << 24
)

// Validate checks that the shape describes a KV cache the planner can size, and that
// the optional fields, when given, are consistent with it.
func (s Shape) Validate() error {
	if s.Window < 0 || s.Window > maxContext {
		return fmt.Errorf("plan: sliding window must be in [0, %d], got %d", maxContext, s.Window)
	}
	if s.SlidingLayers < 0 || s.SlidingLayers > 0 && (s.Window == 0 || s.SlidingLayers >= s.Layers) {
		return fmt.Errorf("plan: sliding layers must be 0 (every layer slides when there is a window) or in [1, layers) with a window, got %d of %d layers with window %d",
			s.SlidingLayers, s.Layers, s.Window)
	}
	switch {
	case s.Layers < 1 || s.KVHeads < 1 || s.HeadDim < 1:
		return fmt.Errorf("plan: layers, kv_heads and head_dim must all be ≥ 1, got %d, %d, %d", s.Layers, s.KVHeads, s.HeadDim)
	case s.Layers > maxLayers:
		return fmt.Errorf("plan: %d layers is beyond the planner's limit of %d", s.Layers, maxLayers)
	case s.KVHeads > maxRow/s.HeadDim:
		return fmt.Errorf("plan: kv_heads·head_dim = %d·%d is beyond the planner's limit of %d", s.KVHeads, s.HeadDim, maxRow)
	case s.Heads < 0 || s.Dim < 0 || s.Hidden < 0 || s.Vocab < 0 || s.Context < 0:
		return fmt.Errorf("plan: heads, dim, hidden, vocab and context must not be negative, got %d, %d, %d, %d, %d",
			s.Heads, s.Dim, s.Hidden, s.Vocab, s.Context)
	case s.Heads > 0 && s.Heads%s.KVHeads != 0:
		return fmt.Errorf("plan: %d query heads cannot be grouped over %d KV heads (heads must be a multiple of kv_heads)", s.Heads, s.KVHeads)
	case s.Heads > maxRow/s.HeadDim:
		return fmt.Errorf("plan: heads·head_dim = %d·%d is beyond the planner's limit of %d", s.Heads, s.HeadDim, maxRow)
	case s.Dim > maxWidth || s.Hidden > maxWidth || s.Vocab > maxVocab || s.Context > maxContext:
		return fmt.Errorf("plan: dim %d, hidden %d, vocab %d or context %d is beyond the planner's limits (%d, %d, %d, %d)",
			s.Dim, s.Hidden, s.Vocab, s.Context, maxWidth, maxWidth, maxVocab, maxContext)
	}
	return nil
}

// Params returns the parameter count of a Llama-family model of this shape and true, or
// 0 and false when Heads, Dim, Hidden or Vocab is unknown:
//
//	embedding                      vocab·dim
//	+ layers × ( q, o projections  2·dim·heads·head_dim
//	           + k, v projections  2·dim·kv_heads·head_dim
//	           + q, k, v biases    (heads + 2·kv_heads)·head_dim   (QKVBias only)
//	           + SwiGLU FFN        3·dim·hidden
//	           + two RMSNorms      2·dim
//	           + Gemma's post-norms 2·dim, Gemma 3's q/k norms 2·head_dim )
//	+ final RMSNorm                dim
//	+ output projection            vocab·dim                       (unless Tied)
//
// The shape must be valid.
func (s Shape) Params() (int64, bool) {
	if s.Heads == 0 || s.Dim == 0 || s.Hidden == 0 || s.Vocab == 0 {
		return 0, false
	}
	dim, q, kv := int64(s.Dim), int64(s.Heads*s.HeadDim), int64(s.KVHeads*s.HeadDim)
	layer := 2*dim*q + 2*dim*kv + 3*dim*int64(s.Hidden) + 2*dim
	if s.QKVBias {
		layer += q + 2*kv
	}
	switch s.Family {
	case "gemma2":
		layer += 2 * dim // post-attention and post-MLP norms
	case "gemma3":
		layer += 2*dim + 2*int64(s.HeadDim) // and the per-head q and k norms
	}
	n := int64(s.Vocab)*dim + int64(s.Layers)*layer + dim
	if !s.Tied {
		n += int64(s.Vocab) * dim
	}
	return n, true
}

// GQAGroup is the number of query heads that share one KV head (1 without GQA), or 0
// when Heads is unknown.
func (s Shape) GQAGroup() int {
	if s.Heads == 0 {
		return 0
	}
	return s.Heads / s.KVHeads
}
