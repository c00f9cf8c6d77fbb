package attention

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/quant"
)

// TestPagedEqualsContiguous writes the same keys and values into a paged pool (through a
// scrambled block table) and into plain arrays (after the cache type's round trip), and
// requires the two attentions to agree bit for bit.
func TestPagedEqualsContiguous(t *testing.T) {
	r := rng.New(3)
	for _, ct := range quant.CacheTypes() {
		for _, s := range []Shape{{Heads: 4, KVHeads: 4, HeadDim: 8}, {Heads: 8, KVHeads: 2, HeadDim: 32}, {Heads: 6, KVHeads: 1, HeadDim: 64},
			{Heads: 8, KVHeads: 2, HeadDim: 32, Window: 5}, {Heads: 4, KVHeads: 4, HeadDim: 8, Window: 16},
			{Heads: 4, KVHeads: 2, HeadDim: 32, Window: 7, QueryScalar: 24, SoftCap: 2}} {
			if ct.Validate(s.KVHeads, s.HeadDim) != nil {
				continue
			}
			for _, bs := range []int{1, 3, 16} {
				const n = 37
				blocks := (n + bs - 1) / bs
				pool, err := kvcache.NewPool(kvcache.Config{Layers: 1, KVHeads: s.KVHeads, HeadDim: s.HeadDim, BlockSize: bs, NumBlocks: blocks + 3, KType: ct, VType: ct})
				require.NoError(t, err)
				table := make([]int, blocks)
				for i := range table {
					table[i] = blocks + 2 - i // reversed, and not starting at block 0
				}
				row := s.KVHeads * s.HeadDim
				keys := make([]float32, n*row)
				values := make([]float32, n*row)
				for i := range keys {
					keys[i] = 3 * r.Symmetric()
					values[i] = r.Symmetric()
				}
				for p := 0; p < n; p++ {
					pool.WriteKV(0, table[p/bs], p%bs, keys[p*row:(p+1)*row], values[p*row:(p+1)*row])
					ct.RoundTrip(keys[p*row:(p+1)*row], s.KVHeads, s.HeadDim)
					ct.RoundTrip(values[p*row:(p+1)*row], s.KVHeads, s.HeadDim)
				}
				q := make([]float32, s.Heads*s.HeadDim)
				for i := range q {
					q[i] = r.Symmetric()
				}
				scores := make([]float32, n)
				for _, upto := range []int{1, bs, n} {
					got := make([]float32, len(q))
					want := make([]float32, len(q))
					Paged(got, q, pool, 0, table, upto, s, scores, nil)
					Contiguous(want, q, keys, values, upto, s, scores)
					for i := range got {
						require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]),
							"%s %+v block %d positions %d element %d", ct, s, bs, upto, i)
					}
				}
			}
		}
	}
}

// TestContiguousMatchesDefinition checks the reference attention against a float64
// softmax(q·k/√d)·V written out directly, with GQA head grouping, over every position and
// over a sliding window of 3 (the query at position 4 sees positions 2, 3 and 4); and with
// Gemma's scale (query_pre_attn_scalar^-½ in place of 1/√d) and Gemma 2's soft-cap
// (cap·tanh(s/cap) of every score before the softmax).
func TestContiguousMatchesDefinition(t *testing.T) {
	for _, window := range []int{0, 3} {
		contiguousMatchesDefinition(t, Shape{Heads: 4, KVHeads: 2, HeadDim: 8, Window: window})
	}
	contiguousMatchesDefinition(t, Shape{Heads: 4, KVHeads: 2, HeadDim: 8, Window: 3, QueryScalar: 2})
	contiguousMatchesDefinition(t, Shape{Heads: 4, KVHeads: 2, HeadDim: 8, QueryScalar: 0.5, SoftCap: 1.5})
}

func contiguousMatchesDefinition(t *testing.T, s Shape) {
	r := rng.New(9)
	window := s.Window
	n, row := 5, s.KVHeads*s.HeadDim
	first := 0
	if window > 0 {
		first = n - window
	}
	q := make([]float32, s.Heads*s.HeadDim)
	keys, values := make([]float32, n*row), make([]float32, n*row)
	for _, x := range [][]float32{q, keys, values} {
		for i := range x {
			x[i] = r.Symmetric()
		}
	}
	got := make([]float32, len(q))
	Contiguous(got, q, keys, values, n, s, make([]float32, n))
	for h := 0; h < s.Heads; h++ {
		kvh := h / 2
		w := make([]float64, n)
		sum := 0.0
		for p := first; p < n; p++ {
			dot := 0.0
			for i := 0; i < s.HeadDim; i++ {
				dot += float64(q[h*s.HeadDim+i]) * float64(keys[p*row+kvh*s.HeadDim+i])
			}
			d := float64(s.HeadDim)
			if s.QueryScalar > 0 {
				d = s.QueryScalar
			}
			score := dot / math.Sqrt(d)
			if s.SoftCap > 0 {
				score = float64(s.SoftCap) * math.Tanh(score/float64(s.SoftCap))
			}
			w[p] = math.Exp(score)
			sum += w[p]
		}
		for i := 0; i < s.HeadDim; i++ {
			want := 0.0
			for p := first; p < n; p++ {
				want += w[p] / sum * float64(values[p*row+kvh*s.HeadDim+i])
			}
			require.InDelta(t, want, got[h*s.HeadDim+i], 1e-6)
		}
	}
}
