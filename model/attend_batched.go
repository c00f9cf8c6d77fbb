package model

import (
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/parallel"
)

// Prefill attention, batched. A prefill chunk is many consecutive positions of one
// sequence, all attending over the same keys and values. Instead of one cache lookup, one
// decode and one 64-wide dot per (query, position) pair, the chunk's keys and values are
// decoded once into plain float32 arrays, the scores of all the chunk's queries are one
// matrix product on the matrix kernels (each score is still kernels.Dot(q, k), the same
// bits as attention.Paged's DotHead), and each query then runs Paged's remaining steps
// unchanged: scale, softmax over its own positions 0..pos, values accumulated in position
// order with kernels.AxpyRows (one kernels.Axpy per position: AxpyHead's bits). So the result is bit-identical to attending row
// by row — which the cache-free reference does, and the bitwise checks compare against.

// batchedAttentionMin is the shortest run of consecutive positions of one sequence that
// takes the batched path; decode rows (runs of one) attend row by row.
const batchedAttentionMin = 8

// scoreBlock is how many queries of a run share one product with the keys up to the
// block's last position.
const scoreBlock = 64

// attendAll computes the attention outputs of every row in layer l: runs of consecutive
// positions of one sequence batched, the other rows as kvStore.attend does.
func (p *pagedStore) attendAll(l int, att, q []float32, threads *parallel.Pool) {
	s := p.shape
	qDim := s.Heads * s.HeadDim
	// An item is a KV group's query heads (from head on) of a single row b (run -1), or
	// one head of run number run.
	type item struct{ b, head, run int }
	group := s.Heads / s.KVHeads
	var items []item
	var runs [][2]int
	for b := 0; b < len(p.rows); {
		e := b + 1
		for e < len(p.rows) && p.rows[e].Seq == p.rows[b].Seq && p.rows[e].Pos == p.rows[e-1].Pos+1 {
			e++
		}
		if e-b >= batchedAttentionMin {
			runs = append(runs, [2]int{b, e})
		} else {
			// One item per KV group of a row: the group's query heads read the same
			// keys and values, which the first of them fetches for all.
			for i := b; i < e; i++ {
				for h := 0; h < s.Heads; h += group {
					items = append(items, item{i, h, -1})
				}
			}
		}
		b = e
	}
	// The runs' keys and values, decoded: kv[r] holds, for run r's positions 0..n-1, the
	// keys then the values, each as KVHeads arrays of n rows of HeadDim.
	kv := make([][]float32, len(runs))
	for r, run := range runs {
		kv[r] = p.gather(l, run[1]-1, threads)
		for h := range s.Heads {
			items = append(items, item{-1, h, r})
		}
	}
	// Longest work first: runs attend over many positions.
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	threads.For(len(items), 1, func(start, end int) {
		var scores, qs []float32
		for _, it := range items[start:end] {
			if it.run < 0 {
				if len(scores) < p.maxPositions() {
					scores = make([]float32, p.maxPositions())
				}
				p.attend(l, it.b, it.head, it.head+group, att[it.b*qDim:(it.b+1)*qDim], q[it.b*qDim:(it.b+1)*qDim], scores)
				continue
			}
			run := runs[it.run]
			scores, qs = p.attendRun(l, run[0], run[1], it.head, kv[it.run], att, q, scores, qs)
		}
	})
}

// gather decodes the keys and values of positions 0..last of row b's sequence in layer l
// into one array: KVHeads key arrays of (last+1)·HeadDim values, then as many value arrays.
func (p *pagedStore) gather(l, b int, threads *parallel.Pool) []float32 {
	s, cfg := p.shape, p.pool.Config()
	n := p.rows[b].Pos + 1
	table := p.rows[b].Seq.Table()
	hd, kvDim := s.HeadDim, s.KVHeads*s.HeadDim
	out := make([]float32, 2*n*kvDim)
	threads.For(n, 64, func(start, end int) {
		row := make([]float32, kvDim)
		for t := start; t < end; t++ {
			block, slot := table[t/cfg.BlockSize], t%cfg.BlockSize
			cfg.KType.Decode(row, p.pool.KRow(l, block, slot), s.KVHeads, hd)
			for h := range s.KVHeads {
				copy(out[(h*n+t)*hd:(h*n+t+1)*hd], row[h*hd:(h+1)*hd])
			}
			cfg.VType.Decode(row, p.pool.VRow(l, block, slot), s.KVHeads, hd)
			for h := range s.KVHeads {
				copy(out[((s.KVHeads+h)*n+t)*hd:((s.KVHeads+h)*n+t+1)*hd], row[h*hd:(h+1)*hd])
			}
		}
	})
	return out
}

// attendRun is attention.PagedHeads for one head of the rows [b0, b1), consecutive
// positions of one sequence, over the keys and values kv that gather decoded. scores and
// qs are scratch, returned for reuse.
func (p *pagedStore) attendRun(l, b0, b1, head int, kv, att, q, scores, qs []float32) ([]float32, []float32) {
	s := p.shape
	hd, qDim := s.HeadDim, s.Heads*s.HeadDim
	rows := b1 - b0
	n := p.rows[b1-1].Pos + 1 // the last row attends over every position
	kvh := head / (s.Heads / s.KVHeads)
	keys := kv[kvh*n*hd : (kvh+1)*n*hd]
	values := kv[(s.KVHeads+kvh)*n*hd : (s.KVHeads+kvh+1)*n*hd]
	if len(scores) < scoreBlock*n {
		scores = make([]float32, scoreBlock*n)
	}
	if len(qs) < rows*hd {
		qs = make([]float32, rows*hd)
	}
	for i := range rows {
		copy(qs[i*hd:(i+1)*hd], q[(b0+i)*qDim+head*hd:(b0+i)*qDim+(head+1)*hd])
	}
	// Blocks of queries: scores[i·n + t] = Dot(q_i, k_t) for the block's rows i, against
	// the keys up to its last row's position (the causal triangle, in steps), then each
	// row's softmax and value sum while its scores are still in the cache.
	scale := s.Scale()
	for i0 := 0; i0 < rows; i0 += scoreBlock {
		i1 := min(i0+scoreBlock, rows)
		upto := p.rows[b0+i1-1].Pos + 1
		kernels.MatMulRows(scores, keys, qs[i0*hd:], n, hd, i1-i0, 0, upto)
		for i := i0; i < i1; i++ {
			b := b0 + i
			sc := scores[(i-i0)*n : (i-i0)*n+p.rows[b].Pos+1]
			for t := range sc {
				sc[t] *= scale
			}
			kernels.Softmax(sc)
			if p.probe != nil {
				p.probe(l, b, head, sc)
			}
			out := att[b*qDim+head*hd : b*qDim+(head+1)*hd]
			clear(out)
			kernels.AxpyRows(out, sc, values) // one Axpy per position, in order
		}
	}
	return scores, qs
}
