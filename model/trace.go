package model

import (
	"fmt"

	"github.com/kvref/kvref/quant"
)

// Trace is what one cache-free reference pass computed in every layer, for tools that check
// the cache from outside the engine (engine/oracle): at every position, the rotated query and
// the rotated key and the value before the cache type's round trip — the exact values a cache
// of that type is asked to store.
type Trace struct {
	Q [][]float32 // per layer: n rows of Heads·HeadDim
	K [][]float32 // per layer: n rows of KVHeads·HeadDim
	V [][]float32 // per layer: n rows of KVHeads·HeadDim
}

// ReferenceTrace runs the cache-free reference over tokens exactly as Reference does (keys
// and values through the kType/vType round trip, so every later layer sees what a cached
// run sees) and returns the trace of every layer at every position.
func (r *Runner) ReferenceTrace(tokens []int, kType, vType quant.CacheType) (*Trace, error) {
	c := r.m.Config
	n := len(tokens)
	if n == 0 {
		return nil, fmt.Errorf("model: reference trace of an empty sequence")
	}
	tr := &Trace{Q: make([][]float32, c.Layers), K: make([][]float32, c.Layers), V: make([][]float32, c.Layers)}
	for l := range c.Layers {
		tr.Q[l] = make([]float32, n*c.QDim())
		tr.K[l] = make([]float32, n*c.KVDim())
		tr.V[l] = make([]float32, n*c.KVDim())
	}
	positions := make([]int, n)
	want := make([]bool, n)
	for i := range positions {
		positions[i] = i
	}
	want[n-1] = true
	if _, err := r.forward(tokens, positions, want, newContiguousStore(c, n, kType, vType, tr), nil); err != nil {
		return nil, err
	}
	return tr, nil
}
