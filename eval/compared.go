package eval

import (
	"slices"

	"github.com/kvref/kvref/quant"
)

// Uniform returns one Cache per type, keys and values both of it.
func Uniform(types []quant.CacheType) []Cache {
	out := make([]Cache, len(types))
	for i, t := range types {
		out[i] = Cache{t, t}
	}
	return out
}

// Compared returns the list Caches takes for comparing caches with the f32 cache: the f32
// baseline first, then each of caches that is not listed yet, in order.
func Compared(caches []Cache) []Cache {
	out := []Cache{{quant.F32, quant.F32}}
	for _, c := range caches {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
