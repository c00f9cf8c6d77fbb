package model

import (
	"fmt"

	"github.com/kvref/kvref/attention"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/quant"
)

// Reference computes, with no cache at all, the logits at every position in [from,
// len(tokens)) of the token sequence: all positions are recomputed from the tokens in one
// batch, K/V kept in plain arrays. Keys and values go through the same quantize→dequantize
// round trip as a cache of types kType/vType would apply, so with the fixed reduction
// order of every kernel the cached path must match it bit for bit.
func (r *Runner) Reference(tokens []int, kType, vType quant.CacheType, from int) ([][]float32, error) {
	c := r.m.Config
	n := len(tokens)
	if from < 0 || from >= n {
		return nil, fmt.Errorf("model: reference logits from position %d of a %d-token sequence", from, n)
	}
	positions := make([]int, n)
	want := make([]bool, n)
	for i := range positions {
		positions[i] = i
		want[i] = i >= from
	}
	logits, err := r.forward(tokens, positions, want, newContiguousStore(c, n, kType, vType, nil), nil)
	if err != nil {
		return nil, err
	}
	return logits[from:], nil
}

// newContiguousStore returns plain arrays for the K/V of n positions, recording into trace
// when it is not nil.
func newContiguousStore(c Config, n int, kType, vType quant.CacheType, trace *Trace) *contiguousStore {
	s := &contiguousStore{
		kType: kType, vType: vType,
		shape:  attention.Shape{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim},
		layer:  c.AttentionShape,
		keys:   make([][]float32, c.Layers),
		values: make([][]float32, c.Layers),
		n:      n,
		trace:  trace,
	}
	for l := range s.keys {
		s.keys[l] = make([]float32, n*c.KVDim())
		s.values[l] = make([]float32, n*c.KVDim())
	}
	return s
}

// contiguousStore keeps K/V of every position in plain float32 arrays (after the cache
// type's round trip) and attends with the naive reference attention.
type contiguousStore struct {
	kType, vType quant.CacheType
	shape        attention.Shape
	layer        func(l int) attention.Shape // each layer's attention (Config.AttentionShape)
	keys, values [][]float32                 // per layer, n rows of kv_heads·head_dim
	n            int
	trace        *Trace // when not nil, receives the queries and the K/V before the round trip
}

func (s *contiguousStore) store(l, b int, k, v []float32) {
	row := s.shape.KVHeads * s.shape.HeadDim
	kd := s.keys[l][b*row : (b+1)*row]
	vd := s.values[l][b*row : (b+1)*row]
	copy(kd, k)
	copy(vd, v)
	if s.trace != nil {
		copy(s.trace.K[l][b*row:], k)
		copy(s.trace.V[l][b*row:], v)
	}
	s.kType.RoundTrip(kd, s.shape.KVHeads, s.shape.HeadDim)
	s.vType.RoundTrip(vd, s.shape.KVHeads, s.shape.HeadDim)
}

func (s *contiguousStore) attend(l int, att, q []float32, threads *parallel.Pool) {
	if s.trace != nil {
		copy(s.trace.Q[l], q)
	}
	attention.ContiguousBatch(att, q, s.keys[l], s.values[l], s.n, s.layer(l), threads)
}
