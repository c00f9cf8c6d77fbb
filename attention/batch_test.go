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

// TestSharedShortRunsEqualContiguousBatch: sequences that share a prompt's blocks, one
// decoding a row and the others prefilling short runs of their own tokens after the prompt,
// in one batch. The short runs join the decode row's cluster (attendDecode reads the shared
// blocks once for all of them) and every row equals the reference's, attending over its own
// sequence's plain rows, bit for bit; a run too long to join keeps the batched prefill path
// and equals it too. With a sliding window the rows of one run attend from different blocks
// and land in different clusters: still the reference's bits.
func TestSharedShortRunsEqualContiguousBatch(t *testing.T) {
	r := rng.New(11)
	threads := parallel.NewPool(2)
	defer threads.Close()
	for _, ct := range []quant.CacheType{quant.F32, quant.F16, quant.Q8_0} {
		for _, s := range []Shape{
			{Heads: 4, KVHeads: 4, HeadDim: 32},
			{Heads: 4, KVHeads: 2, HeadDim: 32, QueryScalar: 10, SoftCap: 3},
			{Heads: 4, KVHeads: 4, HeadDim: 32, Window: 9}, // rows of one run start from different blocks
		} {
			const bs, prompt = 4, 24                          // six shared blocks
			lengths := []int{31, 38, 37, 40 + sharedRunHeads} // each sequence's positions after the batch
			starts := []int{30, 28, 27, 39}                   // its rows in the batch: positions start..length-1
			row, qDim := s.KVHeads*s.HeadDim, s.Heads*s.HeadDim
			promptBlocks := prompt / bs
			blocks := promptBlocks
			for _, n := range lengths {
				blocks += (n+bs-1)/bs - promptBlocks
			}
			pool, err := kvcache.NewPool(kvcache.Config{Layers: 1, KVHeads: s.KVHeads, HeadDim: s.HeadDim, BlockSize: bs, NumBlocks: blocks, KType: ct, VType: ct})
			require.NoError(t, err)
			next := blocks // handed out from the top down
			take := func() int { next--; return next }
			shared := make([]int, promptBlocks)
			for i := range shared {
				shared[i] = take()
			}
			fill := func(dst []float32, scale float32) {
				for i := range dst {
					dst[i] = scale * r.Symmetric()
				}
			}
			promptK, promptV := make([]float32, promptBlocks*bs*row), make([]float32, promptBlocks*bs*row)
			fill(promptK, 2)
			fill(promptV, 1)
			var rows []Query
			var q []float32
			type sequence struct{ keys, values, q []float32 }
			seqs := make([]sequence, len(lengths))
			for i, n := range lengths {
				table := append([]int(nil), shared...)
				for len(table) < (n+bs-1)/bs {
					table = append(table, take())
				}
				keys, values := make([]float32, n*row), make([]float32, n*row)
				copy(keys, promptK)
				copy(values, promptV)
				fill(keys[len(promptK):], 2)
				fill(values[len(promptV):], 1)
				for p := range n {
					if p >= len(promptK)/row || i == 0 { // the shared blocks are written once
						pool.WriteKV(0, table[p/bs], p%bs, keys[p*row:(p+1)*row], values[p*row:(p+1)*row])
					}
					ct.RoundTrip(keys[p*row:(p+1)*row], s.KVHeads, s.HeadDim)
					ct.RoundTrip(values[p*row:(p+1)*row], s.KVHeads, s.HeadDim)
				}
				seqs[i] = sequence{keys, values, make([]float32, n*qDim)}
				fill(seqs[i].q, 1)
				for p := starts[i]; p < n; p++ {
					rows = append(rows, Query{Seq: i, Pos: p, Table: table})
				}
				q = append(q, seqs[i].q[starts[i]*qDim:]...)
			}
			st := stretches(rows, bs, s)
			require.Len(t, st, len(lengths))
			if s.Window == 0 {
				require.Equal(t, []bool{false, false, false, true}, []bool{st[0].run, st[1].run, st[2].run, st[3].run},
					"%s: the short runs join the cluster, the long one stays a run", ct)
			}
			got := make([]float32, len(q))
			PagedBatch(got, q, pool, 0, rows, s, threads, nil)
			b := 0
			for i, n := range lengths {
				want := make([]float32, n*qDim)
				ContiguousBatch(want, seqs[i].q, seqs[i].keys, seqs[i].values, n, s, threads)
				for p := starts[i]; p < n; p++ {
					for j := range qDim {
						require.Equal(t, math.Float32bits(want[p*qDim+j]), math.Float32bits(got[b*qDim+j]), "%s %d heads: sequence %d position %d element %d", ct, s.Heads, i, p, j)
					}
					b++
				}
			}
		}
	}
}
