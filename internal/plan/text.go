package plan

import (
	"fmt"
	"io"

	"github.com/kvref/kvref/internal/texttable"
	"github.com/kvref/kvref/quant"
)

// TextInfo is what the text form of a plan shows beside its Report: the model's name (as
// the first line shows it), its parameter count (0: unknown), where the memory and the
// weights figures came from, and notes for the last lines.
type TextInfo struct {
	Model                   string
	Params                  int64
	MemoryFrom, WeightsFrom string
	Notes                   []string
}

// WriteText writes a plan for people, as `kvref plan` prints it: the headline numbers with
// their arithmetic, then the GQA, cache-type and shared-prefix comparisons, then the notes.
func WriteText(w io.Writer, r Report, info TextInfo) {
	s := r.Shape
	desc := fmt.Sprintf("%d layers, %s%d KV heads of %d", s.Layers, countIf(s.Heads, "%d query heads, "), s.KVHeads, s.HeadDim)
	if info.Params > 0 {
		desc += ", " + FormatCount(info.Params) + " parameters"
	}
	switch {
	case s.Hybrid():
		desc += fmt.Sprintf(", %d of them over a sliding window of %d", s.SlidingLayers, s.Window)
	case s.Window > 0:
		desc += fmt.Sprintf(", sliding window %d", s.Window)
	}
	fmt.Fprintf(w, "model   %s: %s\n", info.Model, desc)
	fmt.Fprintf(w, "cache   %s, %d-token sequences, blocks of %d tokens\n\n", CacheTypeName(r.KType, r.VType), r.Context, r.BlockSize)

	left := fmt.Sprintf("%d B = %d blocks of %s", r.Left, r.CacheBlocks, FormatSize(r.BytesPerBlock))
	if r.Left == 0 {
		left = "0 B"
	}
	texttable.Write(w, "", "lrl", [][]string{
		{"per token", FormatSize(r.BytesPerToken), tokenArithmetic(r)},
		{"per sequence", FormatSize(r.BytesPerSequence), sequenceArithmetic(r)},
		{"in blocks", FormatSize(r.BlockBytesPerSequence), blockArithmetic(r)},
		{"memory", FormatSize(r.Memory), info.MemoryFrom},
		{"weights", FormatSize(r.Weights), info.WeightsFrom},
		{"left for the cache", FormatSize(r.Left), left},
		{"max sequences", fmt.Sprint(r.MaxSequences), fmt.Sprintf("full %d-token sequences at once", r.Context)},
	})
	fmt.Fprintln(w)
	writeGroups(w, r)
	writeGQA(w, r)
	writeCacheTypes(w, r)
	writeSharedPrefixes(w, r)
	if len(info.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range info.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
}

// writeGQA writes the comparison with one KV head per query head.
func writeGQA(w io.Writer, r Report) {
	s := r.Shape
	switch {
	case r.WithoutGQA == nil:
		fmt.Fprintln(w, "GQA: give --heads to compare with one KV head per query head")
	case s.Heads == s.KVHeads:
		fmt.Fprintf(w, "GQA: none, every one of the %d query heads has its own KV head already\n", s.Heads)
	default:
		g := r.WithoutGQA
		fmt.Fprintf(w, "GQA: each KV head serves %d query heads; without GQA every query head has its own (weights unchanged):\n", s.GQAGroup())
		texttable.Write(w, "  ", "lrrrr", [][]string{
			{"", "KV heads", "per token", "per sequence", "sequences"},
			{"with GQA", fmt.Sprint(s.KVHeads), FormatSize(r.BytesPerToken), FormatSize(r.BlockBytesPerSequence), fmt.Sprint(r.MaxSequences)},
			{"without", fmt.Sprint(g.KVHeads), FormatSize(g.BytesPerToken), FormatSize(g.BlockBytesPerSequence), fmt.Sprint(g.MaxSequences)},
		})
		fmt.Fprintf(w, "  without GQA a token costs %d× the bytes\n", g.BytesPerToken/r.BytesPerToken)
	}
}

// writeCacheTypes writes the plan at every cache type, the planned one marked with *.
func writeCacheTypes(w io.Writer, r Report) {
	fmt.Fprintln(w, "\ncache types (keys and values both stored as):")
	rows := [][]string{{"", "stores per value", "per token", "per sequence", "sequences"}}
	for _, v := range r.CacheTypes {
		name := v.KType.String()
		if v.KType == r.KType && v.VType == r.VType {
			name += " *"
		}
		if v.Err != nil {
			rows = append(rows, []string{name, StoresPerValue(v.KType), "-", "-", "kv_heads·head_dim not a multiple of 32"})
			continue
		}
		rows = append(rows, []string{name, StoresPerValue(v.KType), FormatSize(v.BytesPerToken), FormatSize(v.BlockBytesPerSequence), fmt.Sprint(v.MaxSequences)})
	}
	texttable.Write(w, "  ", "llrrr", rows)
}

// writeSharedPrefixes writes the plan with a shared prompt prefix of each length.
func writeSharedPrefixes(w io.Writer, r Report) {
	fmt.Fprintf(w, "\nshared prefix (every sequence starts with the same prompt; its full blocks are stored once):\n")
	rows := [][]string{{"prefix", "shared blocks", "own blocks", "sequences"}}
	for _, p := range r.SharedPrefixes {
		name := "none"
		if p.Tokens > 0 {
			name = fmt.Sprintf("%d tokens", p.Tokens)
		}
		rows = append(rows, []string{name, fmt.Sprint(p.SharedBlocks), fmt.Sprint(p.OwnBlocks), fmt.Sprint(p.MaxSequences)})
	}
	texttable.Write(w, "  ", "lrrr", rows)
}

// tokenArithmetic spells out how the bytes per token come about.
func tokenArithmetic(r Report) string {
	s := r.Shape
	if e, ok := ElementBytes(r.KType); ok && r.KType == r.VType {
		return fmt.Sprintf("2 · %d layers · %d KV heads · %d · %d B = %d B", s.Layers, s.KVHeads, s.HeadDim, e, r.BytesPerToken)
	}
	return fmt.Sprintf("%d layers × (%d B K row + %d B V row) = %d B", s.Layers, r.KRowBytes, r.VRowBytes, r.BytesPerToken)
}

// sequenceArithmetic spells out the bytes of one full sequence: its tokens, or with a sliding
// window the window's.
func sequenceArithmetic(r Report) string {
	if r.Groups != nil {
		return "the sum over the cache groups below: full layers hold every token, sliding ones their window"
	}
	if w := r.Shape.Window; w > 0 && w < r.Context {
		return fmt.Sprintf("%d tokens of the sliding window (of %d) × %d B", w, r.Context, r.BytesPerToken)
	}
	return fmt.Sprintf("%d tokens × %d B", r.Context, r.BytesPerToken)
}

// blockArithmetic spells out the block rounding of one sequence.
func blockArithmetic(r Report) string {
	s := fmt.Sprintf("%d blocks of %d tokens, %s each", r.BlocksPerSequence, r.BlockSize, FormatSize(r.BytesPerBlock))
	if r.Groups != nil {
		return s + fmt.Sprintf(" (%d layers each; every group's blocks, below)", r.Groups[0].LayersPerGroup)
	}
	if w := r.Shape.Window; w > 0 && w < r.Context {
		return s + " (the window spans at most this many; the blocks it has left are released)"
	}
	if pad := r.BlocksPerSequence*r.BlockSize - r.Context; pad > 0 {
		s += fmt.Sprintf(" (%d slots of the last block unused)", pad)
	}
	return s
}

// StoresPerValue says in a few words what a cache type stores per value: "2 B",
// "34 B per 32 values", "1 B + 4 B scale per head".
func StoresPerValue(t quant.CacheType) string {
	if e, ok := ElementBytes(t); ok {
		return fmt.Sprintf("%d B", e)
	}
	if values, bytes := t.Block(); values > 0 {
		return fmt.Sprintf("%d B per %d values", bytes, values)
	}
	if value, scale := t.ValueBytes(); scale > 0 {
		return fmt.Sprintf("%d B + %d B scale per head", value, scale)
	}
	return t.String()
}

// CacheTypeName is "f16" when keys and values share a type, else "keys q8_0, values f16".
func CacheTypeName(k, v quant.CacheType) string {
	if k == v {
		return k.String()
	}
	return fmt.Sprintf("keys %v, values %v", k, v)
}

// countIf formats n with format, or returns "" when n is 0 (unknown).
func countIf(n int, format string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(format, n)
}

// FormatCount prints a parameter count as model cards do: "6.74B", "134.5M"; 0 (unknown)
// is "?".
func FormatCount(n int64) string {
	switch {
	case n == 0:
		return "?"
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprint(n)
}
