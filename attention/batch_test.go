package attention

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/quant"
)

// TestPagedBatchEqualsContiguousBatch: a whole sequence's rows attended in one batch through
// the pages (prefill runs batched, the tail row by row) equal the reference's rows bit for bit,
// with and without a sliding window; with a window the blocks wholly before the batch's first
// window are holes in the table, which nothing may read.
func TestPagedBatchEqualsContiguousBatch(t *testing.T) {
	r := rng.New(5)
	threads := parallel.NewPool(2)
	defer threads.Close()
	for _, ct := range []quant.CacheType{quant.F32, quant.F16, quant.Int8} {
		for _, window := range []int{0, 1, 7, 40} {
			s := Shape{Heads: 4, KVHeads: 2, HeadDim: 16, Window: window}
			if window == 7 { // Gemma's scale and soft-cap take the same steps on every path
				s.QueryScalar, s.SoftCap = 10, 3
			}
			const n, bs, from = 150, 4, 60 // the batch computes positions from..n-1
			blocks := (n + bs - 1) / bs
			pool, err := kvcache.NewPool(kvcache.Config{Layers: 1, KVHeads: s.KVHeads, HeadDim: s.HeadDim, BlockSize: bs, NumBlocks: blocks, KType: ct, VType: ct})
			require.NoError(t, err)
			table := make([]int, blocks)
			for i := range table {
				table[i] = blocks - 1 - i
			}
			row, qDim := s.KVHeads*s.HeadDim, s.Heads*s.HeadDim
			keys, values := make([]float32, n*row), make([]float32, n*row)
			for i := range keys {
				keys[i], values[i] = 2*r.Symmetric(), r.Symmetric()
			}
			for p := range n {
				pool.WriteKV(0, table[p/bs], p%bs, keys[p*row:(p+1)*row], values[p*row:(p+1)*row])
				ct.RoundTrip(keys[p*row:(p+1)*row], s.KVHeads, s.HeadDim)
				ct.RoundTrip(values[p*row:(p+1)*row], s.KVHeads, s.HeadDim)
			}
			for i := range s.First(from) / bs {
				table[i] = kvcache.Hole // out of every row's window: must not be read
			}
			q := make([]float32, n*qDim)
			for i := range q {
				q[i] = r.Symmetric()
			}
			want := make([]float32, n*qDim)
			ContiguousBatch(want, q, keys, values, n, s, threads)
			// The batch: a prefill run of positions from..n-2 (batched path), then the last
			// position as a decode row of its own (sequence id 1 breaks the run).
			var rows []Query
			for p := from; p < n; p++ {
				seq := 0
				if p == n-1 {
					seq = 1
				}
				rows = append(rows, Query{Seq: seq, Pos: p, Table: table})
			}
			got := make([]float32, len(rows)*qDim)
			var probed int
			PagedBatch(got, q[from*qDim:], pool, 0, rows, s, threads, func(b, head int, w []float32) {
				if b == len(rows)-1 && head == 0 {
					require.Len(t, w, n)
					for p := range s.First(n - 1) {
						require.Zero(t, w[p], "outside the window")
					}
					probed++
				}
			})
			require.Equal(t, 1, probed)
			for i := range got {
				require.Equal(t, math.Float32bits(want[from*qDim+i]), math.Float32bits(got[i]), "%s window %d element %d", ct, window, i)
			}
		}
	}
}
