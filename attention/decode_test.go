package attention

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/quant"
)

// TestDecodeStreamsEqualPerHead: a batch of decode rows — sequences that share a prompt's
// blocks (one a fork that shares a partly filled block), rows of one sequence at
// consecutive positions, a sequence of its own — attended by attendDecode over clusters of
// rows that share blocks, and each row on its own, gives PagedHeads' bits (and so the
// reference's) for every cache type, for MHA and GQA, with and without a sliding window
// (holes in the tables before it), Gemma's scale and soft-cap, and at every kernel level.
// The probe sees the same weights.
func TestDecodeStreamsEqualPerHead(t *testing.T) {
	defer func(p int) { decodePath = p }(decodePath)
	threads := parallel.NewPool(2)
	defer threads.Close()
	for _, level := range kernels.Levels() {
		previous, err := kernels.Restrict(level)
		require.NoError(t, err)
		for _, ct := range quant.CacheTypes() {
			for _, s := range []Shape{
				{Heads: 4, KVHeads: 4, HeadDim: 32},
				{Heads: 8, KVHeads: 2, HeadDim: 16},
				{Heads: 6, KVHeads: 2, HeadDim: 48, Window: 21, QueryScalar: 10, SoftCap: 3},
				{Heads: 3, KVHeads: 1, HeadDim: 36, Window: 5},
			} {
				if ct.Validate(s.KVHeads, s.HeadDim) != nil {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/%d-%d-%d-w%d", level, ct, s.Heads, s.KVHeads, s.HeadDim, s.Window), func(t *testing.T) {
					checkDecodeStreams(t, ct, s, threads)
				})
			}
		}
		_, err = kernels.Restrict(previous)
		require.NoError(t, err)
	}
}

func checkDecodeStreams(t *testing.T, ct quant.CacheType, s Shape, threads *parallel.Pool) {
	r := rng.New(uint64(ct) + 7)
	const bs, blocks = 8, 40
	pool, err := kvcache.NewPool(kvcache.Config{Layers: 2, KVHeads: s.KVHeads, HeadDim: s.HeadDim, BlockSize: bs, NumBlocks: blocks, KType: ct, VType: ct})
	require.NoError(t, err)
	row := make([]float32, s.KVHeads*s.HeadDim)
	for l := range 2 {
		for b := range blocks {
			for slot := range bs {
				for i := range row {
					row[i] = 2 * r.Symmetric()
				}
				k := append([]float32(nil), row...)
				for i := range row {
					row[i] = r.Symmetric()
				}
				pool.WriteKV(l, b, slot, k, row)
			}
		}
	}
	// A prompt of 4 full blocks and a partly filled one (a fork shares it), then each
	// sequence's own blocks.
	prompt := []int{17, 3, 30, 8, 22}
	seqA := append(append([]int(nil), prompt...), 5, 11, 35)
	seqB := append(append([]int(nil), prompt[:4]...), 1, 2)
	seqC := append(append([]int(nil), prompt...), 26)
	own := []int{39, 0, 12, 9}
	rows := []Query{
		{Seq: 0, Pos: 62, Table: seqA},
		{Seq: 1, Pos: 45, Table: seqB},
		{Seq: 2, Pos: 34, Table: seqC}, // slots 0..2 of prompt[4] are the fork's
		{Seq: 3, Pos: 29, Table: own},
		{Seq: 4, Pos: 36, Table: seqC}, // another fork of the prompt, the same positions' blocks
		{Seq: 4, Pos: 37, Table: seqC},
		{Seq: 5, Pos: 0, Table: own},
	}
	if s.Window > 0 {
		// Blocks wholly before a row's window are holes in its own copy of the table.
		for i := range rows {
			table := append([]int(nil), rows[i].Table...)
			for b := range s.First(rows[i].Pos) / bs {
				table[b] = kvcache.Hole
			}
			rows[i].Table = table
		}
	}
	qDim := s.Heads * s.HeadDim
	q := make([]float32, len(rows)*qDim)
	for i := range q {
		q[i] = r.Symmetric()
	}
	type probed struct{ row, head int }
	run := func(path int) ([]float32, map[probed][]float32) {
		decodePath = path
		out := make([]float32, len(q))
		for i := range out {
			out[i] = float32(math.NaN()) // every output is written
		}
		weights := map[probed][]float32{}
		var mu sync.Mutex
		PagedBatch(out, q, pool, 1, rows, s, threads, func(b, head int, w []float32) {
			mu.Lock()
			defer mu.Unlock()
			weights[probed{b, head}] = append([]float32(nil), w...)
		})
		return out, weights
	}
	// All the rows, and a sequence decoding alone (its blocks' values added in place when it
	// has one query head per KV head).
	all := rows
	for _, rows = range [][]Query{all, all[:1], all[3:4]} {
		want, wantW := run(decodePerHead)
		require.Len(t, wantW, len(rows)*s.Heads)
		for _, path := range []int{decodeShared, decodePerRow} {
			got, gotW := run(path)
			for i := range got {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "%d rows, path %d row %d element %d", len(rows), path, i/qDim, i%qDim)
			}
			require.Len(t, gotW, len(wantW))
			for k, w := range wantW {
				require.Len(t, gotW[k], len(w), "path %d probe %v", path, k)
				for i := range w {
					require.Equal(t, math.Float32bits(w[i]), math.Float32bits(gotW[k][i]), "%d rows, path %d probe %v position %d", len(rows), path, k, i)
				}
			}
		}
	}
}
