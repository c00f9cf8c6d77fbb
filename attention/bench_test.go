package attention

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/quant"
)

// BenchmarkDecodeAttention times one decode step's attention (one query row over ctx
// cached positions, TinyLlama's layer shape: 32 query heads over 4 KV heads of 64) for
// every cache type in the same run, and reports each type's time relative to f32.
//
//	go test ./attention -run '^$' -bench DecodeAttention -benchtime 20x
func BenchmarkDecodeAttention(b *testing.B) {
	s := Shape{Heads: 32, KVHeads: 4, HeadDim: 64}
	for _, ctx := range []int{1024, 4096} {
		b.Run(fmt.Sprintf("ctx=%d", ctx), func(b *testing.B) {
			types := quant.CacheTypes()
			pools := make([]*kvcache.Pool, len(types))
			r := rng.New(1)
			const bs = 16
			table := make([]int, ctx/bs)
			for i := range table {
				table[i] = i
			}
			row := make([]float32, s.KVHeads*s.HeadDim)
			for i, ct := range types {
				p, err := kvcache.NewPool(kvcache.Config{Layers: 1, KVHeads: s.KVHeads, HeadDim: s.HeadDim, BlockSize: bs, NumBlocks: ctx / bs, KType: ct, VType: ct})
				require.NoError(b, err)
				for pos := 0; pos < ctx; pos++ {
					for j := range row {
						row[j] = r.Symmetric()
					}
					p.WriteKV(0, pos/bs, pos%bs, row, row)
				}
				pools[i] = p
			}
			q := make([]float32, s.Heads*s.HeadDim)
			for i := range q {
				q[i] = r.Symmetric()
			}
			out := make([]float32, len(q))
			scores := make([]float32, ctx)
			elapsed := make([]time.Duration, len(types))
			for b.Loop() {
				for i := range types {
					start := time.Now()
					Paged(out, q, pools[i], 0, table, ctx, s, scores, nil)
					elapsed[i] += time.Since(start)
				}
			}
			for i, ct := range types {
				b.ReportMetric(float64(elapsed[i].Microseconds())/float64(b.N), ct.String()+"-µs")
				b.ReportMetric(float64(elapsed[i])/float64(elapsed[0]), ct.String()+"/f32")
			}
		})
	}
}
