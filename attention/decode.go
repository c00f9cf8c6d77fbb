package attention

import (
	"cmp"
	"slices"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/pages"
	"github.com/kvref/kvref/kvcache"
)

// Decode attention that streams the cache. A decode step's rows each attend over their
// whole sequence, and at depth that is most of the step: every cached key and value of every
// layer is read once per row. PagedHeads reads them one query head at a time, so a KV head
// shared by a group of query heads (GQA) is read and decoded once for each of them, one
// position per kernel call; and two sequences that share a prompt's blocks (prefix sharing)
// each read them again.
//
// attendDecode instead takes one KV head of a set of decode rows at a time and walks the
// positions block by block. Each stored block that some rows hold is read and decoded once
// (quant.CacheType.DecodeHeads: its slots' part of the KV head as float32 rows), and then
// every query head of the group, in every row that holds the block, is scored against it
// (kernels.MatMulRows: each score kernels.Dot(q, k), DotHead's bits) and, after the softmax,
// accumulates its values (kernels.AxpyRows: one kernels.Axpy per position, AxpyHead's bits).
// Each query's scores land at their positions, its softmax runs over them in position order
// as PagedHeads' does, and its value sum visits the blocks in position order: so every output
// is bit-identical to PagedHeads', which is bit-identical to the reference. A query head
// that meets a block alone (a sequence of its own, one query head per KV head) reads an f32
// or f16 cache in place instead: DotHeads and AxpyHeads' strided kernels, the same bits
// without the decoded copy. No partial
// softmaxes are merged (vLLM's cascade attention merges them with a log-sum-exp, which
// changes the numerics).

// decodeSegment is one stored block read for a set of rows: logical block index idx of
// those rows' tables holds block phys; the slots [a, a+m) of it are what any of them attend
// over; the item's refs[r0:r1] are those rows (indices into its decode rows).
type decodeSegment struct {
	idx, phys, a, m, r0, r1 int
}

// decodeScratch is one worker's buffers for attendDecode, kept across items and layers.
type decodeScratch struct {
	kv     []float32 // one block's keys or values of one KV head, decoded
	tmp    []float32 // MatMulRows' scores of the rows' query heads against one block
	qs     []float32 // the rows' queries, KV head by KV head
	scores []float32 // each row's scores then weights, Pos+1 values per query head attended
	off    []int     // where each row's scores start
	refs   []int     // rows of each segment
	segs   []decodeSegment
	spans  []decodeSpan
}

// decodeSpan is the segments [k0, k1) of an item, taken together: one segment, or
// consecutive whole blocks (spanSegments) that the same rows attend over entirely and whose
// products take a decoded copy. A span's blocks are decoded one after another into one
// array, so their keys meet the queries in one product of up to spanKeys rows, and each
// query head's scores and value sum over them are one copy and one kernels.AxpyRows call,
// where each block took its own (the same bits: each score is the same Dot, and each value
// sum still adds one position after another in order).
type decodeSpan struct{ k0, k1 int }

// spanKeys is the most positions a span holds: a product of 16 queries against 64 keys
// packs its queries once for four blocks of 16.
const spanKeys = 64

// attendDecode writes the attention of the query heads of the KV heads [kh0, kh1) for the
// decode rows dec (indices into rows; each row attends over its positions
// s.First(Pos)..Pos) into att.
func attendDecode(att, q []float32, pool *kvcache.Pool, layer int, rows []Query, dec []int, kh0, kh1 int, s Shape, sc *decodeScratch, probe Probe) {
	cfg := pool.Config()
	bs, hd := cfg.BlockSize, s.HeadDim
	group := s.Heads / s.KVHeads
	heads := (kh1 - kh0) * group // the query heads attended
	qDim := s.Heads * hd
	// Each row's scores: one array of Pos+1 values for each query head attended, the j-th
	// from kh0·group on at off + j·(Pos+1).
	sc.off = sc.off[:0]
	total, first, last := 0, -1, 0
	for _, b := range dec {
		sc.off = append(sc.off, total)
		n := rows[b].Pos + 1
		total += heads * n
		lo := s.First(rows[b].Pos) / bs
		if first < 0 || lo < first {
			first = lo
		}
		last = max(last, (n-1)/bs)
	}
	sc.scores = grow(sc.scores, total)
	spanBlocks := max(1, spanKeys/bs)
	sc.kv = grow(sc.kv, spanBlocks*bs*hd)
	sc.tmp = grow(sc.tmp, len(dec)*group*spanBlocks*bs)
	// The queries of each KV head attended, row after row: qs[((kvh-kh0)·len(dec) + i)·group·hd:]
	// holds row dec[i]'s group of query heads.
	sc.qs = grow(sc.qs, len(dec)*heads*hd)
	for kvh := kh0; kvh < kh1; kvh++ {
		for i, b := range dec {
			copy(sc.qs[((kvh-kh0)*len(dec)+i)*group*hd:((kvh-kh0)*len(dec)+i+1)*group*hd], q[b*qDim+kvh*group*hd:b*qDim+(kvh+1)*group*hd])
		}
	}
	// The segments, in position order: for each logical block index, the distinct stored
	// blocks the rows hold there, each with the rows that hold it.
	sc.segs, sc.refs = sc.segs[:0], sc.refs[:0]
	for idx := first; idx <= last; idx++ {
		r0 := len(sc.refs)
		for i, b := range dec {
			lo, n := s.First(rows[b].Pos), rows[b].Pos+1
			if idx*bs < n && (idx+1)*bs > lo {
				sc.refs = append(sc.refs, i)
			}
		}
		refs := sc.refs[r0:]
		// Sorted by stored block, stably: rows that share a block become a run, in dec order.
		slices.SortStableFunc(refs, func(x, y int) int {
			return cmp.Compare(rows[dec[x]].Table[idx], rows[dec[y]].Table[idx])
		})
		for i := 0; i < len(refs); {
			phys := rows[dec[refs[i]]].Table[idx]
			a, e := bs, 0
			j := i
			for ; j < len(refs) && rows[dec[refs[j]]].Table[idx] == phys; j++ {
				lo, n := rowSlots(rows[dec[refs[j]]], idx, bs, s)
				a, e = min(a, lo), max(e, n)
			}
			sc.segs = append(sc.segs, decodeSegment{idx: idx, phys: phys, a: a, m: e - a, r0: r0 + i, r1: r0 + j})
			i = j
		}
	}
	sc.spanSegments(rows, dec, group, bs, spanBlocks, s)
	// Scores: each segment's keys decoded once per KV head, then every query head of the
	// group, in every row that holds the block, scored against the slots it attends over.
	// The KV heads of a segment go one after another, so its rows are read whole.
	klo, _ := cfg.KType.HeadBytes(kh0, s.KVHeads, hd)
	_, khi := cfg.KType.HeadBytes(kh1-1, s.KVHeads, hd)
	vlo, _ := cfg.VType.HeadBytes(kh0, s.KVHeads, hd)
	_, vhi := cfg.VType.HeadBytes(kh1-1, s.KVHeads, hd)
	for k := range min(prefetchSegments, len(sc.segs)) {
		prefetchSegment(sc.segmentRows(pool.KRows, layer, k), cfg.KRowBytes(), klo, khi)
	}
	// A segment that one query head per KV head meets alone (a sequence of its own) is read
	// in place, every head of the range in one call. A cache type whose reads ask for the
	// next segment's rows while they work (quant.CacheType.PrefetchesNext: given them as
	// next) needs no prefetchSegment burst, which waits for L1's few miss buffers instead.
	lone := func(g decodeSegment) bool { return group == 1 && g.r1-g.r0 == 1 }
	strided, krb := cfg.KType.StridedDotHeads(), cfg.KRowBytes()
	kBurst := !cfg.KType.PrefetchesNext()
	// The next segment's rows, laid out as segment k's, for the reads to ask for ahead.
	nextK := func(k int) []byte { return sc.segmentRows(pool.KRows, layer, k+1) }
	for _, sp := range sc.spans {
		if kBurst {
			sc.burst(sp, pool.KRows, layer, krb, klo, khi)
		}
		k, g := sp.k0, sc.segs[sp.k0]
		if sp.k1-sp.k0 > 1 {
			// Whole blocks that the same rows attend over: their keys decoded one after
			// another, then scored in one product for each stretch of rows that follow
			// each other in dec.
			m := (sp.k1 - sp.k0) * bs
			refs := sc.refs[g.r0:g.r1]
			for kvh := kh0; kvh < kh1; kvh++ {
				for j := sp.k0; j < sp.k1; j++ {
					cfg.KType.DecodeHeads(sc.kv[(j-sp.k0)*bs*hd:(j-sp.k0+1)*bs*hd], pool.KRows(layer, sc.segs[j].phys, 0, bs), kvh, s.KVHeads, hd, nextK(j))
				}
				qk := sc.qs[(kvh-kh0)*len(dec)*group*hd:]
				for r := 0; r < len(refs); {
					e := r + 1
					for e < len(refs) && refs[e] == refs[r]+e-r {
						e++
					}
					kernels.MatMulRows(sc.tmp, sc.kv[:m*hd], qk[refs[r]*group*hd:], m, hd, (e-r)*group, 0, m)
					for x, i := range refs[r:e] {
						count := rows[dec[i]].Pos + 1
						for j := range group {
							at := sc.off[i] + ((kvh-kh0)*group+j)*count + g.idx*bs
							copy(sc.scores[at:at+m], sc.tmp[(x*group+j)*m:(x*group+j+1)*m])
						}
					}
					r = e
				}
			}
			continue
		}
		next := nextK(k)
		kv := sc.kv[:g.m*hd]
		refs := sc.refs[g.r0:g.r1]
		if lone(g) && strided {
			// Scored straight into the row's scores.
			i := refs[0]
			row := rows[dec[i]]
			lo, n := rowSlots(row, g.idx, bs, s)
			krows := pool.KRows(layer, g.phys, g.a, g.m)
			cfg.KType.DotHeadRange(sc.scores[sc.off[i]+g.idx*bs+lo:], row.Pos+1, sc.qs[i*hd:], len(dec)*hd,
				krows[(lo-g.a)*krb:(n-g.a)*krb], n-lo, kh0, kh1, s.KVHeads, hd, next)
			continue
		}
		for kvh := kh0; kvh < kh1; kvh++ {
			// An f32 cache's keys are read in place by a query that meets them alone;
			// products of several queries take a decoded copy.
			krows := pool.KRows(layer, g.phys, g.a, g.m)
			view, stride, direct := cfg.KType.F32Heads(krows, g.m, kvh, s.KVHeads, hd)
			decoded := false
			qk := sc.qs[(kvh-kh0)*len(dec)*group*hd:]
			// Rows that follow each other in dec and attend over the same slots are scored
			// in one product (a prompt's block held by many sequences: one matrix of their
			// queries against the block's keys).
			for r := 0; r < len(refs); {
				i0 := refs[r]
				lo, n := rowSlots(rows[dec[i0]], g.idx, bs, s)
				e := r + 1
				for e < len(refs) && refs[e] == i0+e-r {
					if l2, n2 := rowSlots(rows[dec[refs[e]]], g.idx, bs, s); l2 != lo || n2 != n {
						break
					}
					e++
				}
				switch batch := (e - r) * group; {
				case direct && batch == 1:
					kernels.DotRowsStrided(sc.tmp[lo-g.a:n-g.a], qk[i0*hd:(i0+1)*hd], view[(lo-g.a)*stride:], stride)
				case batch == 1 && strided:
					// One query (a sequence of its own, one query head per KV head): an f16
					// cache's keys are dotted where they lie, without a decoded copy.
					cfg.KType.DotHeads(sc.tmp[lo-g.a:n-g.a], qk[i0*hd:(i0+1)*hd], krows[(lo-g.a)*krb:(n-g.a)*krb], kvh, s.KVHeads, hd)
				default:
					if !decoded {
						cfg.KType.DecodeHeads(kv, krows, kvh, s.KVHeads, hd, next)
						decoded = true
					}
					kernels.MatMulRows(sc.tmp, kv, qk[i0*group*hd:], g.m, hd, batch, lo-g.a, n-g.a)
				}
				for x, i := range refs[r:e] {
					pos0, count := g.idx*bs+lo, rows[dec[i]].Pos+1
					for j := range group {
						at := sc.off[i] + ((kvh-kh0)*group+j)*count + pos0
						from := (x*group+j)*g.m + lo - g.a
						copy(sc.scores[at:at+n-lo], sc.tmp[from:from+n-lo])
					}
				}
				r = e
			}
		}
	}
	// Each query's softmax over its positions, then its output cleared for the value sums.
	scale := s.Scale()
	for i, b := range dec {
		lo, n := s.First(rows[b].Pos), rows[b].Pos+1
		for j := range heads {
			s.finishScores(sc.scores[sc.off[i]+j*n+lo:sc.off[i]+(j+1)*n], scale)
		}
		// Softmax of each head: kernels.Softmax's bits, four heads side by side.
		kernels.SoftmaxRows(sc.scores[sc.off[i]+lo:sc.off[i]+heads*n], heads, n-lo, n)
		for j := range heads {
			w := sc.scores[sc.off[i]+j*n : sc.off[i]+(j+1)*n]
			h := kh0*group + j
			if probe != nil {
				clear(w[:lo])
				probe(b, h, w)
			}
			clear(att[b*qDim+h*hd : b*qDim+(h+1)*hd])
		}
	}
	// Values: each segment's decoded once per KV head, then added into every query head of
	// the group in every row that holds the block, weighted; the segments go in position
	// order.
	vStrided, vrb := cfg.VType.StridedAxpyHeads(), cfg.VRowBytes()
	vBurst := !cfg.VType.PrefetchesNext()
	for k := range min(prefetchSegments, len(sc.segs)) {
		prefetchSegment(sc.segmentRows(pool.VRows, layer, k), vrb, vlo, vhi)
	}
	nextV := func(k int) []byte { return sc.segmentRows(pool.VRows, layer, k+1) }
	for _, sp := range sc.spans {
		if vBurst {
			sc.burst(sp, pool.VRows, layer, vrb, vlo, vhi)
		}
		k, g := sp.k0, sc.segs[sp.k0]
		if sp.k1-sp.k0 > 1 {
			// Whole blocks: their values decoded one after another, then added into every
			// query head of the rows in one call each, position after position.
			m := (sp.k1 - sp.k0) * bs
			for kvh := kh0; kvh < kh1; kvh++ {
				for j := sp.k0; j < sp.k1; j++ {
					cfg.VType.DecodeHeads(sc.kv[(j-sp.k0)*bs*hd:(j-sp.k0+1)*bs*hd], pool.VRows(layer, sc.segs[j].phys, 0, bs), kvh, s.KVHeads, hd, nextV(j))
				}
				for _, i := range sc.refs[g.r0:g.r1] {
					b := dec[i]
					count := rows[b].Pos + 1
					for j := range group {
						h := kvh*group + j
						at := sc.off[i] + ((kvh-kh0)*group+j)*count + g.idx*bs
						kernels.AxpyRows(att[b*qDim+h*hd:b*qDim+(h+1)*hd], sc.scores[at:at+m], sc.kv[:m*hd])
					}
				}
			}
			continue
		}
		next := nextV(k)
		kv := sc.kv[:g.m*hd]
		if lone(g) && vStrided {
			// The f32 or f16 values are added where they lie (AxpyRows' bits, without a
			// decoded copy).
			i := sc.refs[g.r0]
			b := dec[i]
			lo, n := rowSlots(rows[b], g.idx, bs, s)
			vrows := pool.VRows(layer, g.phys, g.a, g.m)
			cfg.VType.AxpyHeadRange(att[b*qDim+kh0*hd:b*qDim+kh1*hd], hd, sc.scores[sc.off[i]+g.idx*bs+lo:], rows[b].Pos+1,
				vrows[(lo-g.a)*vrb:(n-g.a)*vrb], n-lo, kh0, kh1, s.KVHeads, hd, next)
			continue
		}
		for kvh := kh0; kvh < kh1; kvh++ {
			// An f32 cache's values are read in place (kernels.AxpyRowsStrided, AxpyRows'
			// bits); the other types' are decoded once for all the rows.
			vrows := pool.VRows(layer, g.phys, g.a, g.m)
			view, stride, direct := cfg.VType.F32Heads(vrows, g.m, kvh, s.KVHeads, hd)
			if !direct {
				cfg.VType.DecodeHeads(kv, vrows, kvh, s.KVHeads, hd, next)
			}
			for _, i := range sc.refs[g.r0:g.r1] {
				b := dec[i]
				lo, n := rowSlots(rows[b], g.idx, bs, s)
				pos0, count := g.idx*bs+lo, rows[b].Pos+1
				for j := range group {
					h := kvh*group + j
					at := sc.off[i] + ((kvh-kh0)*group+j)*count + pos0
					if direct {
						kernels.AxpyRowsStrided(att[b*qDim+h*hd:b*qDim+(h+1)*hd], sc.scores[at:at+n-lo], view[(lo-g.a)*stride:], stride)
					} else {
						kernels.AxpyRows(att[b*qDim+h*hd:b*qDim+(h+1)*hd], sc.scores[at:at+n-lo], kv[(lo-g.a)*hd:])
					}
				}
			}
		}
	}
}

// spanSegments splits the item's segments into spans: runs of up to spanBlocks segments of
// consecutive logical blocks, each a whole stored block that the same rows attend over
// entirely, where those rows have two or more query heads to score (so that the products
// take a decoded copy); every other segment is a span of its own.
func (sc *decodeScratch) spanSegments(rows []Query, dec []int, group, bs, spanBlocks int, s Shape) {
	whole := func(g decodeSegment) bool {
		if g.a != 0 || g.m != bs || (g.r1-g.r0)*group < 2 {
			return false
		}
		for _, i := range sc.refs[g.r0:g.r1] {
			if lo, n := rowSlots(rows[dec[i]], g.idx, bs, s); lo != 0 || n != bs {
				return false
			}
		}
		return true
	}
	sc.spans = sc.spans[:0]
	for k := 0; k < len(sc.segs); {
		e := k + 1
		if whole(sc.segs[k]) {
			first := sc.refs[sc.segs[k].r0:sc.segs[k].r1]
			for e < len(sc.segs) && e-k < spanBlocks && sc.segs[e].idx == sc.segs[e-1].idx+1 && whole(sc.segs[e]) &&
				slices.Equal(first, sc.refs[sc.segs[e].r0:sc.segs[e].r1]) {
				e++
			}
		}
		sc.spans = append(sc.spans, decodeSpan{k, e})
		k = e
	}
}

// segmentRows returns the K or V rows (rowsOf: the pool's KRows or VRows) of segment k in
// layer, or nil past the last segment.
func (sc *decodeScratch) segmentRows(rowsOf func(layer, block, slot, count int) []byte, layer, k int) []byte {
	if k >= len(sc.segs) {
		return nil
	}
	g := sc.segs[k]
	return rowsOf(layer, g.phys, g.a, g.m)
}

// burst asks for the bytes [lo, hi) of the rows (rb bytes each) of the segments
// prefetchSegments after each segment of span sp: the reads of a cache type that does not
// ask ahead itself (quant.CacheType.PrefetchesNext) then find them on their way.
func (sc *decodeScratch) burst(sp decodeSpan, rowsOf func(layer, block, slot, count int) []byte, layer, rb, lo, hi int) {
	for k := sp.k0; k < sp.k1; k++ {
		if rows := sc.segmentRows(rowsOf, layer, k+prefetchSegments); rows != nil {
			prefetchSegment(rows, rb, lo, hi)
		}
	}
}

// prefetchSegments is how many segments ahead attendDecode asks for the keys or values it
// reads next, for the cache types whose reads do not ask for the next segment themselves
// (quant.CacheType.PrefetchesNext), and for the first segments of every type: a segment's
// rows are scattered through the pool, usually in main memory, and waiting for them one
// at a time costs more than all the arithmetic.
const prefetchSegments = 2

// prefetchSegment asks for the bytes [lo, hi) of every row of rows (rows of rb bytes).
func prefetchSegment(rows []byte, rb, lo, hi int) {
	for i := 0; i+rb <= len(rows); i += rb {
		kernels.Prefetch(rows[i+lo : i+hi])
	}
}

// rowSlots is the range of slots [lo, n) of logical block idx that the row attends over.
func rowSlots(row Query, idx, bs int, s Shape) (lo, n int) {
	lo = max(s.First(row.Pos)-idx*bs, 0)
	n = min(row.Pos+1-idx*bs, bs)
	return lo, n
}

// grow returns buf with length n, reallocated when it is too short (its contents are stale)
// with a quarter more room: the scores of decode rows grow by a position every step, and a
// buffer of exactly n was reallocated, and its fresh pages faulted in, at every step.
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return pages.Floats(n + n/4)[:n]
	}
	return buf[:n]
}
