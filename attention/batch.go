package attention

import (
	"sync"

	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/kvcache"
)

// Query is one row of a batched forward step: the token at position Pos of one sequence,
// which attends over that sequence's positions 0..Pos through its block table.
type Query struct {
	Seq   int   // the sequence (its kvcache id): consecutive positions of one Seq form a run
	Pos   int   // the row's position
	Table []int // the sequence's block table
}

// Probe receives the attention weights (after the softmax) of one head of one batch row, over
// positions 0..Pos. The slice is only valid during the call; calls come from worker threads,
// concurrently for different rows and heads.
type Probe func(row, head int, weights []float32)

// PagedBatch writes the attention output of every row of a batched step in one layer: row b's
// query is q[b·Heads·HeadDim:], its output att[b·Heads·HeadDim:]. Decode rows stream the
// cache (decode.go): the rows that share stored blocks are taken together, a range of KV
// heads at a time, and each block is read once for all of them. A prefill chunk (a run of
// at least batchedMin consecutive positions of one sequence) takes the batched path
// (prefill.go), unless it is short and shares its first block with other rows of the batch:
// then its rows stream with theirs (stretches). Both give PagedHeads' bits. The threads
// share out the work, longest first.
func PagedBatch(att, q []float32, pool *kvcache.Pool, layer int, rows []Query, s Shape, threads *parallel.Pool, probe Probe) {
	qDim := s.Heads * s.HeadDim
	group := s.Heads / s.KVHeads
	// An item is a KV group's query heads (from head on) of a single row b (run -1,
	// cluster -1: the per-row path), the KV head head of the decode rows of cluster
	// number cluster (attendDecode), or one head of run number run.
	type item struct{ b, head, run, cluster int }
	var items []item
	var runs [][2]int
	// Decode rows are clustered by the stored block of their first attended position:
	// rows of sequences that share a prompt land in one cluster, whose shared blocks
	// attendDecode reads once for all of them. So do the rows of short prefill runs
	// that share that block with another sequence's rows (stretches).
	var clusters [][]int
	clusterOf := map[int]int{}
	for _, st := range stretches(rows, pool.Config().BlockSize, s) {
		b, e := st.b, st.e
		switch {
		case st.run:
			runs = append(runs, [2]int{b, e})
		case decodePath == decodePerHead:
			// One item per KV group of a row: the group's query heads read the same
			// keys and values, which the first of them fetches for all.
			for i := b; i < e; i++ {
				for h := 0; h < s.Heads; h += group {
					items = append(items, item{i, h, -1, -1})
				}
			}
		default:
			for i := b; i < e; i++ {
				key := rows[i].Table[s.First(rows[i].Pos)/pool.Config().BlockSize]
				c, ok := clusterOf[key]
				if !ok || decodePath == decodePerRow {
					c = len(clusters)
					clusterOf[key] = c
					clusters = append(clusters, nil)
				}
				clusters[c] = append(clusters[c], i)
			}
		}
	}
	// A decode item is a range of KV heads of one cluster, as wide as still leaves each
	// thread about two items: attendDecode reads a block's rows for all the heads of its
	// range together, a longer stretch of memory than one head's part of each row.
	workers := 1
	if threads != nil {
		workers = threads.Threads()
	}
	span := min(max(1, s.KVHeads*len(clusters)/(2*workers)), s.KVHeads)
	for c := range clusters {
		for kvh := 0; kvh < s.KVHeads; kvh += span {
			items = append(items, item{-1, kvh, -1, c})
		}
	}
	// The runs' keys and values, decoded: kv[r] holds, for run r's positions 0..n-1, the
	// keys then the values, each as KVHeads arrays of n rows of HeadDim.
	kv := make([][]float32, len(runs))
	for r, run := range runs {
		first, last := rows[run[0]], rows[run[1]-1]
		buf := gather(pool, layer, last.Table, s.First(first.Pos), last.Pos+1, s, threads)
		defer scratch.Put(buf)
		kv[r] = *buf
		for h := range s.Heads {
			items = append(items, item{-1, h, r, -1})
		}
	}
	// Longest work first: runs attend over many positions.
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	longest := 0
	for _, row := range rows {
		longest = max(longest, row.Pos+1)
	}
	threads.For(len(items), 1, func(start, end int) {
		// The scores and queries grow as the items need; what they hold is stale.
		scoresBuf, qsBuf := scratch.Get().(*[]float32), scratch.Get().(*[]float32)
		scores, qs := *scoresBuf, *qsBuf
		defer func() {
			*scoresBuf, *qsBuf = scores, qs
			scratch.Put(scoresBuf)
			scratch.Put(qsBuf)
		}()
		var dsc *decodeScratch
		for _, it := range items[start:end] {
			if it.cluster >= 0 {
				if dsc == nil {
					dsc = decodeScratches.Get().(*decodeScratch)
					defer decodeScratches.Put(dsc)
				}
				attendDecode(att, q, pool, layer, rows, clusters[it.cluster], it.head, min(it.head+span, s.KVHeads), s, dsc, probe)
				continue
			}
			if it.run < 0 {
				if len(scores) < longest {
					scores = make([]float32, longest)
				}
				row := rows[it.b]
				var headProbe func(head int, weights []float32)
				if probe != nil {
					b := it.b
					headProbe = func(head int, weights []float32) { probe(b, head, weights) }
				}
				PagedHeads(att[it.b*qDim:(it.b+1)*qDim], q[it.b*qDim:(it.b+1)*qDim], pool, layer, row.Table, row.Pos+1, s,
					it.head, it.head+group, scores, headProbe)
				continue
			}
			run := runs[it.run]
			scores, qs = attendRun(rows, run[0], run[1], it.head, s, kv[it.run], att, q, scores, qs, probe)
		}
	})
}

// stretch is rows [b, e) of a batch: consecutive positions of one sequence. run says that
// they take the batched prefill path (attendRun) rather than attendDecode's.
type stretch struct {
	b, e int
	run  bool
}

// sharedRunHeads bounds the prefill runs that attendDecode takes when another sequence's
// rows attend from the same stored block: sequences that share a prompt and prefill their
// own short parts in one step (requests that arrive together, each with a few tokens after
// a common system prompt). Their rows then score each shared block's keys in one product
// and read it once, where attendRun would decode all of every run's positions (gather) on
// its own. A run joins when its rows times the query heads of a KV head are at most this
// many: attendDecode keeps every joined row's scores over all its positions at once, which
// for a longer run, or for one with many query heads per KV head, leaves the caches
// (TinyLlama's 8 query heads per KV head, runs of 16 rows after 1,024 shared positions: 1.08
// of the gathered time where stories110M's 12 heads of their own take 0.51). A longer run
// keeps attendRun, whose blocks of queries follow the causal band.
const sharedRunHeads = scoreBlock

// joinShared says whether short prefill runs that share blocks join attendDecode's
// clusters (PagedBatch's way); only benchmarks turn it off, to compare.
var joinShared = true

// stretches splits rows into stretches and says which are prefill runs: at least batchedMin
// rows, and not a short run (sharedRunHeads) whose first attended block another stretch also
// starts from, when decode rows stream (decodeShared).
func stretches(rows []Query, blockSize int, s Shape) []stretch {
	var out []stretch
	from := map[int]int{} // stretches starting from each stored block
	for b := 0; b < len(rows); {
		e := b + 1
		for e < len(rows) && rows[e].Seq == rows[b].Seq && rows[e].Pos == rows[e-1].Pos+1 {
			e++
		}
		out = append(out, stretch{b: b, e: e})
		from[rows[b].Table[s.First(rows[b].Pos)/blockSize]]++
		b = e
	}
	for i, st := range out {
		n := st.e - st.b
		shared := from[rows[st.b].Table[s.First(rows[st.b].Pos)/blockSize]] > 1
		join := joinShared && decodePath == decodeShared && n*s.Heads/s.KVHeads <= sharedRunHeads && shared
		out[i].run = n >= batchedMin && !join
	}
	return out
}

// decodeScratches recycles attendDecode's buffers from one layer and step to the next.
var decodeScratches = sync.Pool{New: func() any { return new(decodeScratch) }}

// The ways PagedBatch can attend decode rows: decodeShared (attendDecode over clusters of
// rows that share blocks: what runs), decodePerRow (attendDecode for each row on its own)
// and decodePerHead (PagedHeads for each KV group of each row). All three give the same
// bits; the benchmarks compare their speed.
const (
	decodeShared = iota
	decodePerRow
	decodePerHead
)

// decodePath is the way PagedBatch attends decode rows; only benchmarks and tests change it.
var decodePath = decodeShared

// ContiguousBatch is the reference's attention for one layer: row b is position b of one
// sequence and attends over positions s.First(b)..b of keys and values held as plain float32 rows
// (row t at [t·KVHeads·HeadDim, (t+1)·KVHeads·HeadDim)), with ContiguousHeads. The threads
// share out (row, head) pairs, last row first: later rows attend over more positions, and
// handing out the longest work first balances the threads.
func ContiguousBatch(att, q, keys, values []float32, n int, s Shape, threads *parallel.Pool) {
	qDim := s.Heads * s.HeadDim
	heads := s.Heads
	threads.For(n*heads, 1, func(start, end int) {
		scores := make([]float32, n)
		for i := n*heads - end; i < n*heads-start; {
			b, h0 := i/heads, i%heads
			h1 := min(heads, h0+(n*heads-start-i))
			ContiguousHeads(att[b*qDim:(b+1)*qDim], q[b*qDim:(b+1)*qDim], keys, values, b+1, s, h0, h1, scores)
			i += h1 - h0
		}
	})
}
