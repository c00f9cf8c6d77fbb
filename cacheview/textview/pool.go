package textview

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvref/kvref/internal/texttable"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/stepper"
)

// Sequences lists the live sequences, cur (the one a front end acts on; nil for none)
// marked with *.
func (v *View) Sequences(cur *stepper.Seq) {
	var w screen
	rows := [][]string{{"", "seq", "tokens", "prompt", "forked from", "table", "text"}}
	for _, q := range v.Session.Live() {
		mark, from := "", ""
		if q == cur {
			mark = "*"
		}
		if q.Parent >= 0 {
			from = fmt.Sprintf("seq %d", q.Parent)
		}
		rows = append(rows, []string{mark, strconv.Itoa(q.ID()), strconv.Itoa(q.KV.Len()), strconv.Itoa(q.Prompt), from,
			fmt.Sprint(q.KV.Table()), strconv.Quote(v.model().Tokenizer.Decode(q.KV.Tokens()))})
	}
	texttable.Write(&w, "  ", "lrrrlll", rows)
	v.flush(&w)
}

// blockGlyph is a block's cell in the grid: . free, c cached, else its refcount (+ for 10 or
// more), with the colour that tells in-use (green), shared (yellow) and cached (blue).
func (v *View) blockGlyph(b kvcache.BlockState) string {
	switch {
	case b.Ref == 0 && b.Cached:
		return v.Paint(Blue, "c")
	case b.Ref == 0:
		return v.Paint(Dim, ".")
	case b.Ref == 1:
		return v.Paint(Green, "1")
	case b.Ref < 10:
		return v.Paint(Yellow, strconv.Itoa(b.Ref))
	}
	return v.Paint(Yellow, "+")
}

// Blocks draws the pool as a grid of ten blocks a row, a legend, and a table of the blocks
// that are not free: fill, refcount, owners (seq[index in its block table]), hash.
func (v *View) Blocks() {
	pool := v.engine().Pool()
	st, blocks := pool.Stats(), pool.Blocks()
	owners := map[int][]string{}
	for id, held := range v.Session.Owners() {
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
			line += "  " + v.blockGlyph(b)
		}
		w.more("%s", line)
	}
	w.field("legend", ".  free")
	w.more("1  in use by one block-table entry")
	w.more("2  shared: the number of block-table entries pointing at it (+: 10 or more)")
	w.more("c  cached: full, no owner, kept for prefix hits; evicted least recently used first")
	grouped := pool.Config().Groups != nil
	rows := [][]string{{"block", "slots", "ref", "held by seq[table index]", "prefix hash"}}
	if grouped {
		rows[0] = append(rows[0], "group")
		w.field("groups", "%s", GroupsLine(pool.Config()))
	}
	for _, b := range blocks {
		if b.Ref == 0 && !b.Cached {
			continue
		}
		row := []string{strconv.Itoa(b.ID), fmt.Sprintf("%d/%d", b.Filled, st.BlockSize), strconv.Itoa(b.Ref),
			strings.Join(owners[b.ID], " "), b.Hash}
		if grouped {
			kind := "full"
			if win := pool.Config().GroupWindow(b.Group); win > 0 {
				kind = fmt.Sprintf("sliding %d", win)
			}
			row = append(row, fmt.Sprintf("%d (%s)", b.Group, kind))
		}
		rows = append(rows, row)
	}
	if len(rows) > 1 {
		texttable.Write(&w, "  ", "rrrlll", rows)
	}
	v.flush(&w)
}
