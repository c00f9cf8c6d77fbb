package model

import (
	"fmt"

	"github.com/kvref/kvref/attention"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/kvcache"
)

// Row is one row of a batched step through the paged cache: the token at position Pos of
// sequence Seq. Its K/V go to the sequence's slot for Pos (reserved beforehand with
// Pool.Reserve) and it attends over positions 0..Pos through the sequence's block table.
type Row struct {
	Seq    *kvcache.Sequence
	Pos    int
	Logits bool // compute this row's logits
	// Replay recomputes a position whose K/V the cache holds already (Pos < Seq.Computed()),
	// for its logits: the row reads the stored K/V, its own included, and writes nothing, so
	// that shared and cached blocks stay as they are. The K/V a row computes depend only on
	// the tokens up to it, so the stored ones are the bits the row would write, and its
	// logits are the ones its first computation had (the prompt log-probabilities of a
	// prefix hit).
	Replay bool
}

// Forward runs one batched step through the cache: prefill chunks and decode tokens of any
// number of sequences together. The rows of one sequence must be its next uncomputed
// positions, in order, after any Replay rows of it (committed positions, in order). Forward writes K/V but does not commit them: call Pool.Commit for
// each sequence afterwards. It returns the logits of the rows that asked for them, in an
// array of its own.
func (r *Runner) Forward(pool *kvcache.Pool, rows []Row) ([][]float32, error) {
	return r.ForwardInto(nil, pool, rows)
}

// ForwardInto is Forward writing the logits into *logits (grown when it is too short)
// rather than into a fresh array, when logits is not nil: the rows it returns are pieces
// of *logits, valid until the next use of the same buffer. A caller that reduces each
// step's logits before the next step (samples, takes log-probabilities) reuses one buffer
// and allocates nothing per step. A fresh array is a vocabulary of float32 per row (2 MB
// for 16 rows of 32,000), which, step after step, the process pages in anew from the
// system until the garbage collector reclaims it: a page fault each 4 KiB, a tenth of a
// stories110M-shape decode step of 16 in a virtual machine.
func (r *Runner) ForwardInto(logits *[]float32, pool *kvcache.Pool, rows []Row) ([][]float32, error) {
	c := r.m.Config
	pc := pool.Config()
	if pc.Layers != c.Layers || pc.KVHeads != c.KVHeads || pc.HeadDim != c.HeadDim {
		return nil, fmt.Errorf("model: cache shaped for %d layers × %d KV heads × %d, model has %d × %d × %d",
			pc.Layers, pc.KVHeads, pc.HeadDim, c.Layers, c.KVHeads, c.HeadDim)
	}
	tokens := make([]int, len(rows))
	positions := make([]int, len(rows))
	want := make([]bool, len(rows))
	next := map[*kvcache.Sequence]int{}
	for b, row := range rows {
		s := row.Seq
		if row.Replay {
			switch {
			case row.Pos < 0 || row.Pos >= s.Computed():
				return nil, fmt.Errorf("model: batch row %d: sequence %d replays position %d, but only positions 0 to %d are computed", b, s.ID(), row.Pos, s.Computed()-1)
			case next[s] != 0:
				return nil, fmt.Errorf("model: batch row %d: sequence %d replays position %d after its uncomputed rows", b, s.ID(), row.Pos)
			}
			for l := range c.Layers {
				if holeBefore(s.LayerTable(l), pc.BlockSize, row.Pos, c.AttentionShape(l)) {
					return nil, fmt.Errorf("model: batch row %d: sequence %d released a block that replayed position %d attends over in layer %d", b, s.ID(), row.Pos, l)
				}
			}
			tokens[b], positions[b], want[b] = s.Tokens()[row.Pos], row.Pos, row.Logits
			continue
		}
		expect, seen := next[s]
		if !seen {
			expect = s.Computed()
		}
		switch {
		case row.Pos != expect:
			return nil, fmt.Errorf("model: batch row %d: sequence %d position %d, want %d (the next uncomputed one)", b, s.ID(), row.Pos, expect)
		case row.Pos >= s.Len():
			return nil, fmt.Errorf("model: batch row %d: sequence %d has no token at position %d (length %d)", b, s.ID(), row.Pos, s.Len())
		}
		for l := range c.Layers {
			switch table := s.LayerTable(l); {
			case row.Pos/pc.BlockSize >= len(table):
				return nil, fmt.Errorf("model: batch row %d: sequence %d has no cache slot for position %d in layer %d; call Reserve first", b, s.ID(), row.Pos, l)
			case holeBefore(table, pc.BlockSize, row.Pos, c.AttentionShape(l)):
				return nil, fmt.Errorf("model: batch row %d: sequence %d released a block that position %d still attends over in layer %d", b, s.ID(), row.Pos, l)
			}
		}
		next[s] = row.Pos + 1
		tokens[b], positions[b], want[b] = s.Tokens()[row.Pos], row.Pos, row.Logits
	}
	store := &pagedStore{
		pool:    pool,
		rows:    rows,
		queries: make([][]attention.Query, pool.Groups()),
		layer:   c.AttentionShape,
		probe:   r.probe,
	}
	for g := range store.queries {
		store.queries[g] = make([]attention.Query, len(rows))
		for b, row := range rows {
			store.queries[g][b] = attention.Query{Seq: row.Seq.ID(), Pos: row.Pos, Table: row.Seq.GroupTable(g)}
		}
	}
	return r.forward(tokens, positions, want, store, logits)
}

// holeBefore reports whether a block that the row at pos attends over, in a layer of shape
// s whose block table is table, was reclaimed (kvcache.Hole). Holes form a prefix of the
// table (Reclaim releases from the start, a sliding group's prefix hit leaves the blocks
// before its window out), so it is enough to look at the block of the first position the
// row attends over.
func holeBefore(table []int, blockSize, pos int, s attention.Shape) bool {
	return table[s.First(pos)/blockSize] == kvcache.Hole
}

// pagedStore keeps K/V in the paged cache and attends through block tables.
type pagedStore struct {
	pool    *kvcache.Pool
	rows    []Row
	queries [][]attention.Query         // the rows as attention sees them, per cache group (its block tables)
	layer   func(l int) attention.Shape // each layer's attention (Config.AttentionShape)
	probe   AttentionProbe
}

func (p *pagedStore) store(l, b int, k, v []float32) {
	if p.rows[b].Replay {
		return // the cache holds this position's K/V already (the same bits)
	}
	blockID, slot := p.rows[b].Seq.LayerSlot(l, p.rows[b].Pos)
	p.pool.WriteKV(l, blockID, slot, k, v)
}

func (p *pagedStore) attend(l int, att, q []float32, threads *parallel.Pool) {
	var probe attention.Probe
	if p.probe != nil {
		probe = func(row, head int, weights []float32) { p.probe(l, row, head, weights) }
	}
	attention.PagedBatch(att, q, p.pool, l, p.queries[p.pool.LayerGroup(l)], p.layer(l), threads, probe)
}

// AttentionProbe receives the attention weights of one head of one batch row in one layer,
// over positions 0..pos, during Forward. The slice is only valid during the call.
type AttentionProbe func(layer, row, head int, weights []float32)

// SetAttentionProbe installs (or, with nil, removes) a probe called from Forward. Forward
// calls it from worker threads, concurrently for different heads and rows.
func (r *Runner) SetAttentionProbe(p AttentionProbe) { r.probe = p }
