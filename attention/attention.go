// Package attention computes grouped-query attention (GQA).
//
// For one query row, Paged (and PagedHeads, a range of its heads) reads keys and values
// straight from the cache pool's blocks through a sequence's block table, dequantizing
// inside the loop (no gathered or dequantized copy of a page); Contiguous (ContiguousHeads)
// is the naive reference over plain float32 arrays. PagedBatch attends every row of one
// layer's batched step, decode rows one by one and runs of prompt positions of one
// sequence (chunked prefill) through the batched path of prefill.go, which decodes the
// run's keys and values once and scores its queries with one matrix product;
// ContiguousBatch is the reference's layer over plain arrays. All of them take exactly the
// same steps in the same order — scores in position order, softmax, values accumulated in
// position order — so with the same K/V values they give bit-identical results.
package attention

import (
	"math"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/kvcache"
)

// Shape is the head layout of one attention layer.
type Shape struct {
	Heads   int // query heads
	KVHeads int // key/value heads; each serves Heads/KVHeads query heads
	HeadDim int
	// Window is the layer's sliding attention window (Mistral, Qwen2's sliding layers): the
	// query at position p attends over [p-Window+1, p], Window positions counting itself, as
	// Hugging Face and llama.cpp mask it. 0: every earlier position.
	Window int
	// QueryScalar sets the score scale to QueryScalar^-½ (Gemma's query_pre_attn_scalar);
	// 0: HeadDim, the usual 1/sqrt(head_dim).
	QueryScalar float64
	// SoftCap, when > 0, caps every scaled score s at SoftCap·tanh(s/SoftCap) before the
	// softmax (Gemma 2's attn_logit_softcapping); 0: none.
	SoftCap float32
}

// First is the first position the query at position pos attends over.
func (s Shape) First(pos int) int {
	if s.Window > 0 {
		return max(0, pos-s.Window+1)
	}
	return 0
}

// Scale is the factor applied to every q·k score: 1/sqrt(head_dim), or
// 1/sqrt(QueryScalar) when the shape gives one.
func (s Shape) Scale() float32 {
	d := float64(s.HeadDim)
	if s.QueryScalar > 0 {
		d = s.QueryScalar
	}
	return float32(1 / math.Sqrt(d))
}

// finishScores turns raw q·k products into the scores the softmax takes: each multiplied by
// scale (Scale, computed once by the caller), then soft-capped when the shape says so. Every
// attention path calls it on the same products in the same order, so they agree bit for bit.
func (s Shape) finishScores(x []float32, scale float32) {
	kernels.Scale(x, scale)
	if s.SoftCap > 0 {
		kernels.SoftCap(x, s.SoftCap)
	}
}

// Paged writes into out (Heads·HeadDim values) the attention of query q (Heads·HeadDim
// values, already rotated, at position n-1) over positions [s.First(n-1), n) of the sequence
// whose block table is table, in one layer of pool. scores needs room for n values. probe,
// when not nil, is called with each head's attention weights over positions 0..n-1 (after the
// softmax; 0 outside the window) — for tools that show them.
func Paged(out, q []float32, pool *kvcache.Pool, layer int, table []int, n int, s Shape, scores []float32, probe func(head int, weights []float32)) {
	PagedHeads(out, q, pool, layer, table, n, s, 0, s.Heads, scores, probe)
}

// PagedHeads is Paged for the query heads [h0, h1) only: it reads and writes only those
// heads' parts of q and out, so disjoint head ranges of one row can run in parallel.
func PagedHeads(out, q []float32, pool *kvcache.Pool, layer int, table []int, n int, s Shape, h0, h1 int, scores []float32, probe func(head int, weights []float32)) {
	cfg := pool.Config()
	bs := cfg.BlockSize
	group := s.Heads / s.KVHeads
	scale := s.Scale()
	lo := s.First(n - 1)
	scores = scores[:n]
	for h := h0; h < h1; h++ {
		kvh := h / group
		qh := q[h*s.HeadDim : (h+1)*s.HeadDim]
		// The first head of a KV group here asks for its keys and values a few positions
		// ahead: the rows are scattered through the pool and usually in main memory, and
		// waiting for them one at a time would cost more than all the arithmetic. The
		// other heads of the group then find them in the cache.
		ahead, klo, khi, vlo, vhi := 0, 0, 0, 0, 0
		if h == h0 || h%group == 0 {
			ahead = prefetchAhead
			klo, khi = cfg.KType.HeadBytes(kvh, s.KVHeads, s.HeadDim)
			vlo, vhi = cfg.VType.HeadBytes(kvh, s.KVHeads, s.HeadDim)
		}
		// The positions go a block's run of slots at a time: their rows are consecutive in
		// the pool, one call for the run (an f32 or f16 cache's in one strided kernel).
		for t := lo; t < n; {
			m := min(bs-t%bs, n-t)
			for u := t + ahead; ahead > 0 && u < min(t+m+ahead, n); u++ {
				kernels.Prefetch(pool.KRow(layer, table[u/bs], u%bs)[klo:khi])
				kernels.Prefetch(pool.VRow(layer, table[u/bs], u%bs)[vlo:vhi])
			}
			cfg.KType.DotHeads(scores[t:t+m], qh, pool.KRows(layer, table[t/bs], t%bs, m), kvh, s.KVHeads, s.HeadDim)
			t += m
		}
		s.finishScores(scores[lo:n], scale)
		kernels.Softmax(scores[lo:])
		if probe != nil {
			clear(scores[:lo])
			probe(h, scores)
		}
		oh := out[h*s.HeadDim : (h+1)*s.HeadDim]
		clear(oh)
		for t := lo; t < n; {
			m := min(bs-t%bs, n-t)
			cfg.VType.AxpyHeads(oh, scores[t:t+m], pool.VRows(layer, table[t/bs], t%bs, m), kvh, s.KVHeads, s.HeadDim)
			t += m
		}
	}
}

// prefetchAhead is how many positions ahead PagedHeads asks for keys and values.
const prefetchAhead = 8

// Contiguous is the reference: the same attention (over [s.First(n-1), n)) over keys and
// values stored as plain float32 rows, row t at [t·KVHeads·HeadDim, (t+1)·KVHeads·HeadDim).
func Contiguous(out, q, keys, values []float32, n int, s Shape, scores []float32) {
	ContiguousHeads(out, q, keys, values, n, s, 0, s.Heads, scores)
}

// ContiguousHeads is Contiguous for the query heads [h0, h1) only.
func ContiguousHeads(out, q, keys, values []float32, n int, s Shape, h0, h1 int, scores []float32) {
	group := s.Heads / s.KVHeads
	scale := s.Scale()
	rowLen := s.KVHeads * s.HeadDim
	lo := s.First(n - 1)
	scores = scores[:n]
	for h := h0; h < h1; h++ {
		kvh := h / group
		qh := q[h*s.HeadDim : (h+1)*s.HeadDim]
		for t := lo; t < n; t++ {
			k := keys[t*rowLen+kvh*s.HeadDim : t*rowLen+(kvh+1)*s.HeadDim]
			scores[t] = kernels.Dot(qh, k)
		}
		s.finishScores(scores[lo:n], scale)
		kernels.Softmax(scores[lo:])
		oh := out[h*s.HeadDim : (h+1)*s.HeadDim]
		clear(oh)
		for t := lo; t < n; t++ {
			v := values[t*rowLen+kvh*s.HeadDim : t*rowLen+(kvh+1)*s.HeadDim]
			kernels.Axpy(oh, scores[t], v)
		}
	}
}
