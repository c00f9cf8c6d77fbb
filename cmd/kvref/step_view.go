package main

import (
	"fmt"
	"github.com/kvref/kvref/engine"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/internal/texttable"
	"github.com/kvref/kvref/kvcache"
)

// What `kvref step` prints. Every line is labelled with a short word in a column of its own
// so that the transcript reads as a table; lines never end in spaces (transcripts are kept
// in Markdown and compared by tests).

// ANSI colours, used only when the session runs on a terminal (see stepper.paint).
const (
	bold   = "1"
	dim    = "2"
	red    = "31"
	green  = "32"
	yellow = "33"
	blue   = "34"
)

// paint wraps text in an ANSI colour when colours are on.
func (s *stepper) paint(code, text string) string {
	if !s.color || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// screen collects the lines of one command's output.
type screen struct{ strings.Builder }

// field writes one labelled line: "  label   text".
func (w *screen) field(label, format string, a ...any) {
	fmt.Fprintf(w, "  %-7s %s\n", label, fmt.Sprintf(format, a...))
}

// more writes a continuation line of the previous field.
func (w *screen) more(format string, a ...any) {
	fmt.Fprintf(w, "          %s\n", fmt.Sprintf(format, a...))
}

// flush writes the screen to the session's output without trailing spaces.
func (s *stepper) flush(w *screen) {
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	fmt.Fprintln(s.out, strings.Join(lines, "\n"))
}

// say prints one line indented like a field.
func (s *stepper) say(format string, a ...any) {
	var w screen
	fmt.Fprintf(&w, "  "+format+"\n", a...)
	s.flush(&w)
}

// tokenLabel shows a token as the text it adds, quoted (" there", "\n"), or as its
// vocabulary entry when it adds no text (<s>).
func (s *stepper) tokenLabel(id int) string {
	if piece := s.m.Tokenizer.Piece(id); len(piece) > 0 {
		return strconv.Quote(string(piece))
	}
	return s.m.Tokenizer.TokenText(id)
}

// plural is "1 slot" or "3 slots".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// tokenFormula spells out the bytes of one token slot from the cache's shape:
// 2 · layers · kv_heads · head_dim · bytes_per_element, or per row for scaled types.
func tokenFormula(c kvcache.Config) string {
	if e, ok := plan.ElementBytes(c.KType); ok && c.KType == c.VType {
		return fmt.Sprintf("2 · %d layers · %d KV heads · %d head_dim · %d B", c.Layers, c.KVHeads, c.HeadDim, e)
	}
	return fmt.Sprintf("%d layers × (%d B K row + %d B V row)", c.Layers, c.KRowBytes(), c.VRowBytes())
}

// showHeader prints the model, the cache's arithmetic and the sampling parameters.
func (s *stepper) showHeader() {
	c, pc := s.m.Config, s.eng.Pool.Config()
	var w screen
	fmt.Fprintf(&w, "model     %s: %d layers, %d query heads, %d KV heads of %d values, vocab %d, context %d\n",
		s.m.Source, c.Layers, c.Heads, c.KVHeads, c.HeadDim, s.m.Tokenizer.VocabSize(), s.eng.Context)
	fmt.Fprintf(&w, "cache     %s, %d blocks of %d token slots\n", plan.CacheTypeName(pc.KType, pc.VType), pc.NumBlocks, pc.BlockSize)
	if pc.KType == pc.VType {
		if _, ok := plan.ElementBytes(pc.KType); !ok {
			fmt.Fprintf(&w, "          %s stores %s\n", pc.KType, plan.StoresPerValue(pc.KType))
		}
	}
	fmt.Fprintf(&w, "          %d B per token = %s\n", pc.BytesPerToken(), tokenFormula(pc))
	fmt.Fprintf(&w, "          %d B per block = %d slots × %d B; the pool: %d × %d B = %d B\n",
		pc.BytesPerBlock(), pc.BlockSize, pc.BytesPerToken(), pc.NumBlocks, pc.BytesPerBlock(), s.eng.Pool.AllocatedBytes())
	p := s.sess.Sampling()
	fmt.Fprintf(&w, "sampling  temp %g, top-k %d, top-p %g, min-p %g, seed %d (sequence N samples with a seed derived from it and N)\n",
		p.Temperature, p.TopK, p.TopP, p.MinP, p.Seed)
	s.flush(&w)
}

// showPrefill prints a new sequence: its tokens, their positions and slots, and which came
// from the cache (the session's prefix-hit events: a block whose reference count is now 1
// was cached with no owner, any other is now shared).
func (s *stepper) showPrefill(a engine.Added, text string) {
	kv, hit := a.Seq.KV, a.Hit
	var w screen
	var reused []string
	for _, e := range a.Events {
		switch {
		case e.Kind != kvcache.PrefixHit:
		case e.Ref == 1:
			reused = append(reused, fmt.Sprintf("block %d was cached, no owner", e.Block))
		default:
			reused = append(reused, fmt.Sprintf("block %d now shared, refcount %d", e.Block, e.Ref))
		}
	}
	bs := s.eng.Pool.Config().BlockSize
	fmt.Fprintf(&w, "%s  prompt %q: %d tokens, %d from the cache, %d computed in one forward pass\n",
		s.paint(bold, fmt.Sprintf("seq %d", kv.ID())), text, kv.Len(), hit, kv.Len()-hit)
	if hit > 0 {
		w.field("prefix", "hit: the first %d tokens' K/V are reused, not computed (%s)", hit, strings.Join(reused, "; "))
	}
	rows := [][]string{{"pos", "id", "token", "block", "slot", ""}}
	for pos, id := range kv.Tokens() {
		block, slot := kv.Slot(pos)
		from := ""
		if pos < hit {
			from = "from the cache"
		}
		rows = append(rows, []string{strconv.Itoa(pos), strconv.Itoa(id), s.tokenLabel(id), strconv.Itoa(block), strconv.Itoa(slot), from})
	}
	texttable.Write(&w, "    ", "rrlrrl", rows)
	w.field("table", "%v   (position p's K/V: block table[p/%d], slot p%%%d)", kv.Table(), bs, bs)
	s.cacheLines(&w)
	fmt.Fprintf(&w, "Enter decodes the next token of seq %d; help lists the commands.\n", kv.ID())
	s.flush(&w)
}

// showDecoded prints one decode step, from the session's record of it (the reservation says
// whether the slot needed a new block, a copy-on-write, or an eviction).
func (s *stepper) showDecoded(d engine.Decoded) {
	kv := d.Seq.KV
	var w screen
	how := d.How
	if how == "sampled" {
		how = fmt.Sprintf("sampled at temp %g", s.sess.Sampling().Temperature)
	}
	w.field("token", "%s  id %d  p %.4f  rank %d of %d  (%s)", s.paint(bold, s.tokenLabel(d.Token)), d.Token, d.P, d.Rank, len(d.Seq.Logits), how)
	if s.top > 0 {
		var alts []string
		for i, id := range d.Top {
			alts = append(alts, fmt.Sprintf("%s %.4f", s.tokenLabel(id), d.Probs[i]))
		}
		w.field(fmt.Sprintf("top %d", s.top), "%s", strings.Join(alts, " · "))
	}
	where := fmt.Sprintf("pos %d → block %d, slot %d", d.Pos, d.Block, d.Slot)
	evicted := slices.ContainsFunc(d.Cache.Evictions, func(e kvcache.Event) bool { return e.Block == d.Block })
	switch {
	case len(d.Cache.New) > 0:
		w.field("K/V", "%s: %s (the sequence's last block is full)", where, s.paint(green, fmt.Sprintf("new block %d", d.Block)))
		if evicted {
			w.more("no block was free: block %d was cached (no owner), so it was evicted from the prefix index", d.Block)
			w.more("(the least recently used cached block goes first) and reused")
		}
	case len(d.Cache.Copies) > 0:
		c := d.Cache.Copies[0]
		fromRef := s.eng.Pool.Blocks()[c.From].Ref + 1 // the copy took the writer's reference away
		w.field("K/V", "%s: %s", where, s.paint(yellow, "copy-on-write"))
		w.more("block %d was shared (refcount %d), so its %s first copied into new block %d;", c.From, fromRef,
			plural(c.Slots, "filled slot was", "filled slots were"), d.Block)
		w.more("block %d now has refcount %d", c.From, fromRef-1)
		if evicted {
			w.more("no block was free: block %d was cached (no owner), so it was evicted from the prefix index and reused", d.Block)
		}
	default:
		w.field("K/V", "%s", where)
	}
	w.field("table", "%v", kv.Table())
	s.cacheLines(&w)
	w.field("text", "%q", s.m.Tokenizer.Decode(kv.Tokens()))
	if d.Attention != nil {
		s.attentionLines(&w, d)
	}
	if s.m.Tokenizer.IsEOG(d.Token) {
		w.field("note", "%s ends the text; n goes on anyway", s.tokenLabel(d.Token))
	}
	s.flush(&w)
}

// cacheLines prints the pool's totals and the arithmetic of the bytes in use.
func (s *stepper) cacheLines(w *screen) {
	st := s.eng.Pool.Stats()
	shared := ""
	if st.BlocksShared > 0 {
		shared = fmt.Sprintf(" (%d shared)", st.BlocksShared)
	}
	w.field("cache", "%d used%s · %d cached · %d free of %d blocks · %d tokens in %d slots",
		st.BlocksUsed, shared, st.BlocksCached, st.BlocksFree, st.BlocksTotal, st.TokensStored, int64(st.BlocksUsed*st.BlockSize))
	w.field("bytes", "%d in use = %s × %d slots × %d B per token (%s)",
		st.BytesInUse, plural(st.BlocksUsed, "block", "blocks"), st.BlockSize, st.BytesPerToken, tokenFormula(s.eng.Pool.Config()))
}

// attnName describes the attention selection: "layer 2, head 5" or "layer 2, mean of 8 heads".
func (s *stepper) attnName() string {
	a := s.sess.Attention()
	if a.Head >= 0 {
		return fmt.Sprintf("layer %d, head %d", a.Layer, a.Head)
	}
	return fmt.Sprintf("layer %d, mean of %d heads", a.Layer, s.m.Config.Heads)
}

// sparkBars are the eight bar heights of the attention chart.
var sparkBars = []rune("▁▂▃▄▅▆▇█")

// attentionLines draws the new token's attention weights over positions 0..pos as one bar
// per position, scaled to the largest weight, with a ruler every 10 positions, and lists
// the three strongest positions.
func (s *stepper) attentionLines(w *screen, d engine.Decoded) {
	weights := d.MeanAttention()
	peak := slices.Max(weights)
	w.field("attn", "%s: pos %d attends over pos 0-%d (█ = %.3f)", s.attnName(), d.Pos, d.Pos, peak)
	const width = 60
	for start := 0; start < len(weights); start += width {
		end := min(start+width, len(weights))
		ruler := []rune(strings.Repeat(" ", end-start+4))
		bars := make([]rune, 0, end-start)
		for i := start; i < end; i++ {
			if i%10 == 0 {
				copy(ruler[i-start:], []rune(strconv.Itoa(i)))
			}
			level := int(math.Ceil(weights[i] / peak * 8))
			bars = append(bars, sparkBars[min(max(level, 1), 8)-1])
		}
		w.more("%s", string(ruler))
		w.more("%s", string(bars))
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case weights[a] > weights[b]:
			return -1
		case weights[a] < weights[b]:
			return 1
		}
		return 0
	})
	var strongest []string
	for _, i := range order[:min(3, len(order))] {
		strongest = append(strongest, fmt.Sprintf("pos %d %s %.3f", i, s.tokenLabel(d.Seq.KV.Tokens()[i]), weights[i]))
	}
	w.more("strongest: %s", strings.Join(strongest, " · "))
}

// showFork prints a fork: the shared table, the refcounts, and what the sibling's next
// write will do.
func (s *stepper) showFork(parent, q *engine.SessionSeq) {
	kv, pool := q.KV, s.eng.Pool
	blocks := pool.Blocks()
	var refs []string
	for _, id := range kv.Table() {
		refs = append(refs, fmt.Sprintf("%d:%d", id, blocks[id].Ref))
	}
	var w screen
	w.field("fork", "seq %d shares all %d blocks of seq %d's table %v and its %d tokens; nothing is copied",
		kv.ID(), len(kv.Table()), parent.ID(), kv.Table(), kv.Len())
	w.field("refs", "block:refcount %s", strings.Join(refs, " "))
	bs := pool.Config().BlockSize
	pos := kv.Len()
	if i := pos / bs; i < len(kv.Table()) {
		w.field("next", "pos %d goes to slot %d of block %d, which is shared: that write will copy it first (copy-on-write)", pos, pos%bs, kv.Table()[i])
	} else {
		w.field("next", "pos %d starts a new block of seq %d's own; the full blocks stay shared", pos, kv.ID())
	}
	w.field("now", "on seq %d, which samples with its own seed (switch %d goes back)", kv.ID(), parent.ID())
	s.cacheLines(&w)
	s.flush(&w)
}

// showSwitch prints the sequence switched to.
func (s *stepper) showSwitch(q *engine.SessionSeq) {
	var w screen
	w.field("now", "on seq %d: %d tokens, table %v", q.ID(), q.KV.Len(), q.KV.Table())
	w.field("text", "%q", s.m.Tokenizer.Decode(q.KV.Tokens()))
	s.flush(&w)
}

// showFree prints what happened to each block of a freed sequence.
func (s *stepper) showFree(q *engine.SessionSeq, f engine.Freed) {
	blocks := s.eng.Pool.Blocks()
	var fates []string
	for _, id := range f.Table {
		b := blocks[id]
		switch {
		case b.Ref > 0:
			fates = append(fates, fmt.Sprintf("block %d still used (refcount %d)", id, b.Ref))
		case b.Cached:
			fates = append(fates, fmt.Sprintf("block %d cached (full: kept for prefix hits, evictable)", id))
		default:
			fates = append(fates, fmt.Sprintf("block %d free", id))
		}
	}
	var w screen
	w.field("free", "seq %d ended; its blocks lost a reference:", q.ID())
	for _, f := range fates {
		w.more("%s", f)
	}
	s.cacheLines(&w)
	s.flush(&w)
}

// showSequences lists the live sequences, the current one marked with *.
func (s *stepper) showSequences() {
	var w screen
	rows := [][]string{{"", "seq", "tokens", "prompt", "forked from", "table", "text"}}
	for _, q := range s.live() {
		mark, from := "", ""
		if q == s.cur {
			mark = "*"
		}
		if q.Parent >= 0 {
			from = fmt.Sprintf("seq %d", q.Parent)
		}
		rows = append(rows, []string{mark, strconv.Itoa(q.ID()), strconv.Itoa(q.KV.Len()), strconv.Itoa(q.Prompt), from,
			fmt.Sprint(q.KV.Table()), strconv.Quote(s.m.Tokenizer.Decode(q.KV.Tokens()))})
	}
	texttable.Write(&w, "  ", "lrrrlll", rows)
	s.flush(&w)
}

// blockGlyph is a block's cell in the grid: . free, c cached, else its refcount (+ for 10 or
// more), with the colour that tells in-use (green), shared (yellow) and cached (blue).
func (s *stepper) blockGlyph(b kvcache.BlockState) string {
	switch {
	case b.Ref == 0 && b.Cached:
		return s.paint(blue, "c")
	case b.Ref == 0:
		return s.paint(dim, ".")
	case b.Ref == 1:
		return s.paint(green, "1")
	case b.Ref < 10:
		return s.paint(yellow, strconv.Itoa(b.Ref))
	}
	return s.paint(yellow, "+")
}

// showBlocks draws the pool as a grid of ten blocks a row, a legend, and a table of the
// blocks that are not free: fill, refcount, owners (seq[index in its block table]), hash.
func (s *stepper) showBlocks() {
	pool := s.eng.Pool
	st, blocks := pool.Stats(), pool.Blocks()
	owners := map[int][]string{}
	for id, held := range s.sess.Owners() {
		for _, o := range held {
			owners[id] = append(owners[id], fmt.Sprintf("seq %d[%d]", o[0], o[1]))
		}
	}
	var w screen
	shared := ""
	if st.BlocksShared > 0 {
		shared = fmt.Sprintf(" (%d shared)", st.BlocksShared)
	}
	w.field("pool", "%d blocks × %d slots, %d B each: %d used%s · %d cached · %d free",
		st.BlocksTotal, st.BlockSize, st.BytesPerBlock, st.BlocksUsed, shared, st.BlocksCached, st.BlocksFree)
	idw := len(strconv.Itoa(len(blocks) - 1))
	head := strings.Repeat(" ", idw+1)
	for c := range min(10, len(blocks)) {
		head += fmt.Sprintf("%3d", c)
	}
	w.more("%s", head)
	allFree := func(row int) bool {
		for _, b := range blocks[row:min(row+10, len(blocks))] {
			if b.Ref > 0 || b.Cached {
				return false
			}
		}
		return true
	}
	for row := 0; row < len(blocks); row += 10 {
		// Of several rows in a row with only free blocks, the first is drawn and the
		// others are summed up in one line.
		if row > 0 && allFree(row-10) && allFree(row) {
			end := row
			for end+10 < len(blocks) && allFree(end+10) {
				end += 10
			}
			if end > row {
				w.more("%*s   blocks %d-%d: free", idw, "…", row, min(end+10, len(blocks))-1)
				row = end
				continue
			}
		}
		line := fmt.Sprintf("%*d ", idw, row)
		for _, b := range blocks[row:min(row+10, len(blocks))] {
			line += "  " + s.blockGlyph(b)
		}
		w.more("%s", line)
	}
	w.field("legend", ".  free")
	w.more("1  in use by one block-table entry")
	w.more("2  shared: the number of block-table entries pointing at it (+: 10 or more)")
	w.more("c  cached: full, no owner, kept for prefix hits; evicted least recently used first")
	rows := [][]string{{"block", "slots", "ref", "held by seq[table index]", "prefix hash"}}
	for _, b := range blocks {
		if b.Ref == 0 && !b.Cached {
			continue
		}
		rows = append(rows, []string{strconv.Itoa(b.ID), fmt.Sprintf("%d/%d", b.Filled, st.BlockSize), strconv.Itoa(b.Ref),
			strings.Join(owners[b.ID], " "), b.Hash})
	}
	if len(rows) > 1 {
		texttable.Write(&w, "  ", "rrrll", rows)
	}
	s.flush(&w)
}
