package attention

import (
	"sync"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/pages"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/kvcache"
)

// Prefill attention, batched. A prefill chunk is many consecutive positions of one
// sequence, all attending over the same keys and values. Instead of one cache lookup, one
// decode and one dot per (query, position) pair, the chunk's keys and values are decoded
// once into plain float32 arrays (gather), the scores of all the chunk's queries are one
// matrix product on the matrix kernels (each score is still kernels.Dot(q, k), the same
// bits as PagedHeads' DotHead), and each query then runs PagedHeads' remaining steps
// unchanged: scale, softmax over its own positions 0..pos, values accumulated in position
// order with kernels.AxpyRows (one kernels.Axpy per position: AxpyHead's bits). So the
// result is bit-identical to attending row by row, which the cache-free reference does and
// the bitwise checks compare against.

// batchedMin is the shortest run of consecutive positions of one sequence that takes the
// batched path; decode rows (runs of one) attend row by row.
const batchedMin = 8

// scoreBlock is how many queries of a run share one product with the keys up to the
// block's last position.
const scoreBlock = 64

// scratch recycles the batched path's buffers (gather's keys and values, each worker's
// scores and queries) from one layer and step to the next: a fresh buffer of megabytes per
// layer is paged in and zeroed by the kernel on its first writes every time (a
// stories110M-shape prefill of 512 tokens spent 4% of its CPU time there, in gather's
// copies).
var scratch = sync.Pool{New: func() any { return new([]float32) }}

// getScratch returns a buffer of n floats from scratch (its contents are whatever they
// were: the caller writes every element it reads). Give it back with scratch.Put.
func getScratch(n int) *[]float32 {
	p := scratch.Get().(*[]float32)
	if cap(*p) < n {
		*p = pages.Floats(n)
	}
	*p = (*p)[:n]
	return p
}

// gather decodes the keys and values of positions [lo, n) of the sequence with block table
// table in one layer into one array from scratch: KVHeads key arrays of (n-lo)·HeadDim
// values, then as many value arrays (position t at row t-lo).
func gather(pool *kvcache.Pool, layer int, table []int, lo, n int, s Shape, threads *parallel.Pool) *[]float32 {
	cfg := pool.Config()
	hd, kvDim := s.HeadDim, s.KVHeads*s.HeadDim
	m := n - lo
	buf := getScratch(2 * m * kvDim)
	out := *buf
	threads.For(m, 64, func(start, end int) {
		row := make([]float32, kvDim)
		for i := start; i < end; i++ {
			t := lo + i
			block, slot := table[t/cfg.BlockSize], t%cfg.BlockSize
			cfg.KType.Decode(row, pool.KRow(layer, block, slot), s.KVHeads, hd)
			for h := range s.KVHeads {
				copy(out[(h*m+i)*hd:(h*m+i+1)*hd], row[h*hd:(h+1)*hd])
			}
			cfg.VType.Decode(row, pool.VRow(layer, block, slot), s.KVHeads, hd)
			for h := range s.KVHeads {
				copy(out[((s.KVHeads+h)*m+i)*hd:((s.KVHeads+h)*m+i+1)*hd], row[h*hd:(h+1)*hd])
			}
		}
	})
	return buf
}

// attendRun is PagedHeads for one head of the rows [b0, b1), consecutive positions of one
// sequence, over the keys and values kv that gather decoded from the run's first attended
// position on. scores and qs are scratch, returned for reuse.
func attendRun(rows []Query, b0, b1, head int, s Shape, kv, att, q, scores, qs []float32, probe Probe) ([]float32, []float32) {
	hd, qDim := s.HeadDim, s.Heads*s.HeadDim
	lo := s.First(rows[b0].Pos)  // the first position any row of the run attends over
	n := rows[b1-1].Pos + 1 - lo // the last row attends up to its own position
	kvh := head / (s.Heads / s.KVHeads)
	keys := kv[kvh*n*hd : (kvh+1)*n*hd]
	values := kv[(s.KVHeads+kvh)*n*hd : (s.KVHeads+kvh+1)*n*hd]
	if len(scores) < scoreBlock*n {
		scores = make([]float32, scoreBlock*n)
	}
	count := b1 - b0
	if len(qs) < count*hd {
		qs = make([]float32, count*hd)
	}
	for i := range count {
		copy(qs[i*hd:(i+1)*hd], q[(b0+i)*qDim+head*hd:(b0+i)*qDim+(head+1)*hd])
	}
	// Blocks of queries: scores[i·n + t-lo] = Dot(q_i, k_t) for the block's rows i, against
	// the keys from the block's first row's window up to its last row's position (the causal
	// band, in steps), then each row's softmax and value sum while its scores are still in
	// the cache.
	scale := s.Scale()
	for i0 := 0; i0 < count; i0 += scoreBlock {
		i1 := min(i0+scoreBlock, count)
		from := s.First(rows[b0+i0].Pos) - lo
		upto := rows[b0+i1-1].Pos + 1 - lo
		kernels.MatMulRows(scores, keys, qs[i0*hd:], n, hd, i1-i0, from, upto)
		for i := i0; i < i1; i++ {
			b := b0 + i
			first := s.First(rows[b].Pos) - lo
			sc := scores[(i-i0)*n+first : (i-i0)*n+rows[b].Pos+1-lo]
			s.finishScores(sc, scale)
			kernels.Softmax(sc)
			if probe != nil {
				weights := sc
				if first+lo > 0 { // weights over 0..pos, 0 outside the window
					weights = make([]float32, rows[b].Pos+1)
					copy(weights[first+lo:], sc)
				}
				probe(b, head, weights)
			}
			out := att[b*qDim+head*hd : b*qDim+(head+1)*hd]
			clear(out)
			kernels.AxpyRows(out, sc, values[first*hd:]) // one Axpy per position, in order
		}
	}
	return scores, qs
}
