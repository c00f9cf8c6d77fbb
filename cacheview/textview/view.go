package textview

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/stepper"
)

// View prints a session's state and what its commands did. Its methods take the records
// the session's commands return (stepper.Added, stepper.Decoded, ...) and read the rest from
// the session, its engine and the pool; like the session, a View is used from one
// goroutine at a time.
type View struct {
	Session *stepper.Session
	Out     io.Writer
	Color   bool // wrap parts of the text in ANSI colours (for a terminal)
	Top     int  // alternatives shown for each decoded token
}

// ANSI colour codes for Paint.
const (
	Bold   = "1"
	Dim    = "2"
	Red    = "31"
	Green  = "32"
	Yellow = "33"
	Blue   = "34"
)

// Paint wraps text in an ANSI colour when v.Color is set.
func (v *View) Paint(code, text string) string {
	if !v.Color || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (v *View) engine() *engine.Engine { return v.Session.Engine() }
func (v *View) model() *model.Model    { return v.Session.Model() }

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

// flush writes the screen to the view's output without trailing spaces.
func (v *View) flush(w *screen) {
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	fmt.Fprintln(v.Out, strings.Join(lines, "\n"))
}

// Say prints one line indented like a field.
func (v *View) Say(format string, a ...any) {
	var w screen
	fmt.Fprintf(&w, "  "+format+"\n", a...)
	v.flush(&w)
}

// Field prints one labelled line, "  label   text", in the column of the others.
func (v *View) Field(label, format string, a ...any) {
	var w screen
	w.field(label, format, a...)
	v.flush(&w)
}

// TokenLabel shows a token as the text it adds, quoted (" there", "\n"), or as its
// vocabulary entry when it adds no text (<s>).
func (v *View) TokenLabel(id int) string {
	tok := v.model().Tokenizer
	if piece := tok.Piece(id); len(piece) > 0 {
		return strconv.Quote(string(piece))
	}
	return tok.TokenText(id)
}

// plural is "1 slot" or "3 slots".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// TokenFormula spells out the bytes of one token slot from the cache's shape:
// 2 · layers · kv_heads · head_dim · bytes_per_element, or per row for scaled types.
func TokenFormula(c kvcache.Config) string {
	if e, ok := plan.ElementBytes(c.KType); ok && c.KType == c.VType {
		return fmt.Sprintf("2 · %d layers · %d KV heads · %d head_dim · %d B", c.Layers, c.KVHeads, c.HeadDim, e)
	}
	return fmt.Sprintf("%d layers × (%d B K row + %d B V row)", c.Layers, c.KRowBytes(), c.VRowBytes())
}

// Header prints the model, the cache's arithmetic and the sampling parameters.
func (v *View) Header() {
	m, eng := v.model(), v.engine()
	c, pc := m.Config, eng.Pool().Config()
	var w screen
	fmt.Fprintf(&w, "model     %s: %d layers, %d query heads, %d KV heads of %d values, vocab %d, context %d\n",
		m.Source, c.Layers, c.Heads, c.KVHeads, c.HeadDim, m.Tokenizer.VocabSize(), eng.Context())
	fmt.Fprintf(&w, "cache     %s, %d blocks of %d token slots\n", plan.CacheTypeName(pc.KType, pc.VType), pc.NumBlocks, pc.BlockSize)
	if pc.KType == pc.VType {
		if _, ok := plan.ElementBytes(pc.KType); !ok {
			fmt.Fprintf(&w, "          %s stores %s\n", pc.KType, plan.StoresPerValue(pc.KType))
		}
	}
	fmt.Fprintf(&w, "          %d B per token = %s\n", pc.BytesPerToken(), TokenFormula(pc))
	if pc.Groups != nil {
		fmt.Fprintf(&w, "groups    %s\n", GroupsLine(pc))
		fmt.Fprintf(&w, "          %d B per block = %d slots × %d layers × %d B (K and V rows of a token in one layer); the pool: %d × %d B = %d B\n",
			pc.BytesPerBlock(), pc.BlockSize, pc.BlockLayers(), pc.KRowBytes()+pc.VRowBytes(), pc.NumBlocks, pc.BytesPerBlock(), eng.Pool().AllocatedBytes())
	} else {
		fmt.Fprintf(&w, "          %d B per block = %d slots × %d B; the pool: %d × %d B = %d B\n",
			pc.BytesPerBlock(), pc.BlockSize, pc.BytesPerToken(), pc.NumBlocks, pc.BytesPerBlock(), eng.Pool().AllocatedBytes())
	}
	p := v.Session.Sampling()
	fmt.Fprintf(&w, "sampling  temp %g, top-k %d, top-p %g, min-p %g, seed %d (sequence N samples with a seed derived from it and N)\n",
		p.Temperature, p.TopK, p.TopP, p.MinP, p.Seed)
	v.flush(&w)
}

// cacheLines prints the pool's totals and the arithmetic of the bytes in use.
func (v *View) cacheLines(w *screen) {
	pool := v.engine().Pool()
	st := pool.Stats()
	shared := ""
	if st.BlocksShared > 0 {
		shared = fmt.Sprintf(" (%d shared)", st.BlocksShared)
	}
	w.field("cache", "%d used%s · %d cached · %d free of %d blocks · %d tokens in %d slots",
		st.BlocksUsed, shared, st.BlocksCached, st.BlocksFree, st.BlocksTotal, st.TokensStored, int64(st.BlocksUsed*st.BlockSize))
	if pc := pool.Config(); pc.Groups != nil {
		w.field("bytes", "%d in use = %s × %d B (%d slots × %d layers of a group × %d B)",
			st.BytesInUse, plural(st.BlocksUsed, "block", "blocks"), st.BytesPerBlock, st.BlockSize, pc.BlockLayers(), pc.KRowBytes()+pc.VRowBytes())
		var full, sliding, released int64
		var fullUsed, slidingUsed int
		for _, g := range st.Groups {
			if g.Window > 0 {
				slidingUsed += g.BlocksUsed
				released += g.BlocksReclaimed
				sliding++
			} else {
				fullUsed += g.BlocksUsed
				full++
			}
		}
		w.field("groups", "%d blocks held by the %s (global layers: every block kept) · %d by the %s · %d released by the window so far",
			fullUsed, plural(int(full), "full group", "full groups"), slidingUsed, plural(int(sliding), "sliding group", "sliding groups"), released)
		return
	}
	w.field("bytes", "%d in use = %s × %d slots × %d B per token (%s)",
		st.BytesInUse, plural(st.BlocksUsed, "block", "blocks"), st.BlockSize, st.BytesPerToken, TokenFormula(pool.Config()))
}

// GroupsLine describes a pool's cache groups in a line: how many, of how many layers, the
// full ones and the sliding ones with their window and layers.
func GroupsLine(pc kvcache.Config) string {
	var full, sliding []string
	for g := range pc.NumGroups() {
		layers := strings.Trim(strings.ReplaceAll(fmt.Sprint(pc.GroupLayerList(g)), " ", ","), "[]")
		if pc.GroupWindow(g) > 0 {
			sliding = append(sliding, fmt.Sprintf("%d: %s", g, layers))
		} else {
			full = append(full, fmt.Sprintf("%d: %s", g, layers))
		}
	}
	return fmt.Sprintf("%d cache groups of %d layers, one block table each: full (global layers) %s; sliding over %d positions %s",
		pc.NumGroups(), pc.BlockLayers(), strings.Join(full, " · "), pc.GroupWindow(pc.NumGroups()-1), strings.Join(sliding, " · "))
}
