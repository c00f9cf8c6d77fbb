package textview

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvref/kvref/internal/texttable"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/stepper"
)

// Added prints a new sequence: its tokens, their positions and slots, and which came from
// the cache (the session's prefix-hit events: a block whose reference count is now 1 was
// cached with no owner, any other is now shared). text is the prompt as the user gave it.
func (v *View) Added(a stepper.Added, text string) {
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
	bs := v.engine().Pool().Config().BlockSize
	fmt.Fprintf(&w, "%s  prompt %q: %d tokens, %d from the cache, %d computed in one forward pass\n",
		v.Paint(Bold, fmt.Sprintf("seq %d", kv.ID())), text, kv.Len(), hit, kv.Len()-hit)
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
		rows = append(rows, []string{strconv.Itoa(pos), strconv.Itoa(id), v.TokenLabel(id), strconv.Itoa(block), strconv.Itoa(slot), from})
	}
	texttable.Write(&w, "    ", "rrlrrl", rows)
	if !v.groupLines(&w, kv) {
		w.field("table", "%v   (position p's K/V: block table[p/%d], slot p%%%d)", kv.Table(), bs, bs)
	}
	checkLine(&w, a.Check)
	v.cacheLines(&w)
	v.flush(&w)
}

// Decoded prints one decode step, from the session's record of it (the reservation says
// whether the slot needed a new block, a copy-on-write, or an eviction).
func (v *View) Decoded(d stepper.Decoded) {
	kv, pool := d.Seq.KV, v.engine().Pool()
	var w screen
	how := d.How
	if how == "sampled" {
		how = fmt.Sprintf("sampled at temp %g", v.Session.Sampling().Temperature)
	}
	w.field("token", "%s  id %d  p %.4f  rank %d of %d  (%s)", v.Paint(Bold, v.TokenLabel(d.Token)), d.Token, d.P, d.Rank, len(d.Seq.Logits), how)
	if v.Top > 0 {
		var alts []string
		for i, id := range d.Top {
			alts = append(alts, fmt.Sprintf("%s %.4f", v.TokenLabel(id), d.Probs[i]))
		}
		w.field(fmt.Sprintf("top %d", v.Top), "%s", strings.Join(alts, " · "))
	}
	where := fmt.Sprintf("pos %d → block %d, slot %d", d.Pos, d.Block, d.Slot)
	evicted := slices.ContainsFunc(d.Cache.Evictions, func(e kvcache.Event) bool { return e.Block == d.Block })
	switch {
	case len(d.Cache.New) > 0:
		w.field("K/V", "%s: %s (the sequence's last block is full)", where, v.Paint(Green, fmt.Sprintf("new block %d", d.Block)))
		if evicted {
			w.more("no block was free: block %d was cached (no owner), so it was evicted from the prefix index", d.Block)
			w.more("(the least recently used cached block goes first) and reused")
		}
	case len(d.Cache.Copies) > 0:
		c := d.Cache.Copies[0]
		fromRef := pool.Blocks()[c.From].Ref + 1 // the copy took the writer's reference away
		w.field("K/V", "%s: %s", where, v.Paint(Yellow, "copy-on-write"))
		w.more("block %d was shared (refcount %d), so its %s first copied into new block %d;", c.From, fromRef,
			plural(c.Slots, "filled slot was", "filled slots were"), d.Block)
		w.more("block %d now has refcount %d", c.From, fromRef-1)
		if evicted {
			w.more("no block was free: block %d was cached (no owner), so it was evicted from the prefix index and reused", d.Block)
		}
	default:
		w.field("K/V", "%s", where)
	}
	if !v.groupLines(&w, kv) {
		w.field("table", "%v", kv.Table())
	}
	checkLine(&w, d.Check)
	v.cacheLines(&w)
	w.field("text", "%q", v.model().Tokenizer.Decode(kv.Tokens()))
	if d.Attention != nil {
		v.attentionLines(&w, d)
	}
	v.flush(&w)
}

// AttentionName describes the session's attention choice: "layer 2, head 5" or "layer 2,
// mean of 8 heads".
func (v *View) AttentionName() string {
	a := v.Session.Attention()
	if a.Head >= 0 {
		return fmt.Sprintf("layer %d, head %d", a.Layer, a.Head)
	}
	return fmt.Sprintf("layer %d, mean of %d heads", a.Layer, v.model().Config.Heads)
}

// sparkBars are the eight bar heights of the attention chart.
var sparkBars = []rune("▁▂▃▄▅▆▇█")

// attentionLines draws the new token's attention weights over positions 0..pos as one bar
// per position, scaled to the largest weight, with a ruler every 10 positions, and lists
// the three strongest positions.
func (v *View) attentionLines(w *screen, d stepper.Decoded) {
	weights := d.MeanAttention()
	peak := slices.Max(weights)
	w.field("attn", "%s: pos %d attends over pos 0-%d (█ = %.3f)", v.AttentionName(), d.Pos, d.Pos, peak)
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
		strongest = append(strongest, fmt.Sprintf("pos %d %s %.3f", i, v.TokenLabel(d.Seq.KV.Tokens()[i]), weights[i]))
	}
	w.more("strongest: %s", strings.Join(strongest, " · "))
}

// Forked prints a fork of parent into q: the shared table, the refcounts, and what the
// sibling's next write will do. back says how to return to the parent (kvref step: "switch
// N goes back"); empty, the line says nothing about it.
func (v *View) Forked(parent, q *stepper.Seq, back string) {
	kv, pool := q.KV, v.engine().Pool()
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
	if back != "" {
		back = " (" + back + ")"
	}
	w.field("now", "on seq %d, which samples with its own seed%s", kv.ID(), back)
	v.cacheLines(&w)
	v.flush(&w)
}

// Switched prints the sequence q made current.
func (v *View) Switched(q *stepper.Seq) {
	var w screen
	w.field("now", "on seq %d: %d tokens, table %v", q.ID(), q.KV.Len(), q.KV.Table())
	v.groupLines(&w, q.KV)
	w.field("text", "%q", v.model().Tokenizer.Decode(q.KV.Tokens()))
	v.flush(&w)
}

// Freed prints what happened to each block of a freed sequence.
func (v *View) Freed(f stepper.Freed) {
	blocks := v.engine().Pool().Blocks()
	var w screen
	w.field("free", "seq %d ended; its blocks lost a reference:", f.ID)
	table := f.Table
	if f.Tables != nil {
		table = nil
		for _, t := range f.Tables {
			table = append(table, t...)
		}
	}
	for _, id := range table {
		if id == kvcache.Hole {
			continue // released by the window before
		}
		switch b := blocks[id]; {
		case b.Ref > 0:
			w.more("block %d still used (refcount %d)", id, b.Ref)
		case b.Cached:
			w.more("block %d cached (full: kept for prefix hits, evictable)", id)
		default:
			w.more("block %d free", id)
		}
	}
	v.cacheLines(&w)
	v.flush(&w)
}

// groupLines prints, for a pool with cache groups (sliding layers beside full ones), one
// row per group: its layers, its window, kv's block table in it (- for a block the window
// released), how many blocks kv holds there and how many the window released. It reports
// whether it printed anything (nothing for a uniform model).
func (v *View) groupLines(w *screen, kv *kvcache.Sequence) bool {
	pc := v.engine().Pool().Config()
	if pc.Groups == nil {
		return false
	}
	w.field("groups", "seq %d's block tables, one per cache group of %d layers (- : released by the window; position p: table[p/%d], slot p%%%d)",
		kv.ID(), pc.BlockLayers(), pc.BlockSize, pc.BlockSize)
	rows := [][]string{{"group", "layers", "attends over", "table", "held", "released"}}
	for g := range pc.NumGroups() {
		attends := "every position"
		if win := pc.GroupWindow(g); win > 0 {
			attends = fmt.Sprintf("the last %d", win)
		}
		var cells []string
		held, released := 0, 0
		for _, id := range kv.GroupTable(g) {
			if id == kvcache.Hole {
				cells = append(cells, "-")
				released++
				continue
			}
			cells = append(cells, strconv.Itoa(id))
			held++
		}
		layers := strings.Trim(strings.ReplaceAll(fmt.Sprint(pc.GroupLayerList(g)), " ", ","), "[]")
		rows = append(rows, []string{strconv.Itoa(g), layers, attends, "[" + strings.Join(cells, " ") + "]", strconv.Itoa(held), strconv.Itoa(released)})
	}
	texttable.Write(w, "    ", "rllllr", rows)
	return true
}

// checkLine marks a checked step (--check): its logits, recomputed without the cache,
// were bit-identical.
func checkLine(w *screen, c *stepper.Check) {
	if c != nil {
		w.field("check", "✓ max |Δ| %g: pos %d's logits recomputed without the cache are bit-identical", c.MaxAbsDiff, c.Pos)
	}
}

// Undone prints what undo took back (line, as typed) and the sequence now current (nil:
// none).
func (v *View) Undone(line string, cur *stepper.Seq) {
	var w screen
	if line == "" {
		line = "the last command"
	} else {
		line = strconv.Quote(line)
	}
	w.field("undo", "took back %s: the pool, the tables and every sampler are as they were before it", line)
	if cur != nil {
		w.field("now", "on seq %d: %d tokens, table %v", cur.ID(), cur.KV.Len(), cur.KV.Table())
	} else {
		w.field("now", "no sequence is live; add a prompt")
	}
	v.cacheLines(&w)
	v.flush(&w)
}
