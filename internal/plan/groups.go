package plan

import (
	"fmt"
	"io"

	"github.com/kvref/kvref/internal/texttable"
)

// Cache groups: a model whose layers attend differently (Gemma 2 and 3: sliding layers
// beside global ones; gpt-oss) keeps, in kvref's cache as in vLLM's hybrid allocator, one
// block table per cache group of layers that share a window, all drawn from one pool. Every
// group has the same number of layers (each kind split into groups of gcd(layer counts)), so
// a block is B tokens × that many layers. The formula becomes a sum over the kinds:
//
//	bytes at context C = Σ_kind 2 · layers_kind · kv_heads · head_dim · bytes · tokens_kind
//
// with tokens_kind = C for full attention and min(C, W) for a window W: a sliding group stops
// growing at its window. In blocks (what the pool really holds while the last token is
// computed, kvcache.Config.GroupBlocksAt): ceil(C/B) per full group, and per sliding group
// the blocks covering positions [C−W, C), ceil(C/B) − floor((C−W)/B).

// GroupPlan is one kind of layer (full attention, or one window) of a model with cache groups.
type GroupPlan struct {
	Window         int   // 0: full attention
	Layers         int   // layers of this kind
	Groups         int   // cache groups of this kind: Layers / LayersPerGroup
	LayersPerGroup int   // layers one block holds (the same for every kind)
	BytesPerToken  int64 // Layers · (K row + V row): 2 · layers · kv_heads · head_dim · bytes
	Tokens         int   // tokens the kind holds at the planned context: C, or min(C, W)
	Bytes          int64 // Tokens · BytesPerToken: with the window
	BytesNoWindow  int64 // C · BytesPerToken: as if the layers attended over everything
	Blocks         int   // blocks all groups of the kind hold at the context: Groups · blocks per group
}

// Hybrid reports whether the shape has layers of two kinds: SlidingLayers over Window and
// the others over everything.
func (s Shape) Hybrid() bool {
	return s.Window > 0 && s.SlidingLayers > 0 && s.SlidingLayers < s.Layers
}

// blockLayers is how many layers one cache block holds: every layer for a uniform model,
// gcd(full layers, sliding layers) with cache groups.
func (s Shape) blockLayers() int {
	if !s.Hybrid() {
		return s.Layers
	}
	a, b := s.Layers-s.SlidingLayers, s.SlidingLayers
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// groupPlans computes the kinds of a hybrid shape at context ctx, blocks of bs, rowBytes
// the bytes of one layer's K and V rows of one token.
func groupPlans(s Shape, ctx, bs int, rowBytes int64) []GroupPlan {
	if !s.Hybrid() {
		return nil
	}
	lpg := s.blockLayers()
	var out []GroupPlan
	for _, k := range []struct{ window, layers int }{{0, s.Layers - s.SlidingLayers}, {s.Window, s.SlidingLayers}} {
		g := GroupPlan{Window: k.window, Layers: k.layers, Groups: k.layers / lpg, LayersPerGroup: lpg,
			BytesPerToken: int64(k.layers) * rowBytes, Tokens: ctx}
		per := blocksFor(ctx, bs)
		if k.window > 0 && k.window < ctx {
			g.Tokens = k.window
			per -= (ctx - k.window) / bs
		}
		g.Bytes = int64(g.Tokens) * g.BytesPerToken
		g.BytesNoWindow = int64(ctx) * g.BytesPerToken
		g.Blocks = g.Groups * per
		out = append(out, g)
	}
	return out
}

// writeGroups writes the per-group table of a hybrid plan.
func writeGroups(w io.Writer, r Report) {
	if len(r.Groups) == 0 {
		return
	}
	n := 0
	for _, g := range r.Groups {
		n += g.Groups
	}
	fmt.Fprintf(w, "cache groups: layers that share a window keep their own block table; %d groups of %d layers, blocks of %s:\n",
		n, r.Groups[0].LayersPerGroup, FormatSize(r.BytesPerBlock))
	rows := [][]string{{"", "window", "layers", "groups", "per token", fmt.Sprintf("tokens at %d", r.Context), "with the window", "without", "blocks"}}
	var tot GroupPlan
	for _, g := range r.Groups {
		kind, win := "full", "-"
		if g.Window > 0 {
			kind, win = "sliding", fmt.Sprint(g.Window)
		}
		rows = append(rows, []string{kind, win, fmt.Sprint(g.Layers), fmt.Sprint(g.Groups), FormatSize(g.BytesPerToken),
			fmt.Sprint(g.Tokens), FormatSize(g.Bytes), FormatSize(g.BytesNoWindow), fmt.Sprint(g.Blocks)})
		tot.Layers += g.Layers
		tot.Groups += g.Groups
		tot.BytesPerToken += g.BytesPerToken
		tot.Bytes += g.Bytes
		tot.BytesNoWindow += g.BytesNoWindow
		tot.Blocks += g.Blocks
	}
	rows = append(rows, []string{"total", "", fmt.Sprint(tot.Layers), fmt.Sprint(tot.Groups), FormatSize(tot.BytesPerToken), "",
		FormatSize(tot.Bytes), FormatSize(tot.BytesNoWindow), fmt.Sprint(tot.Blocks)})
	texttable.Write(w, "  ", "lrrrrrrrr", rows)
	fmt.Fprintf(w, "  the window makes a %d-token sequence %.1f× smaller (%s instead of %s)\n\n",
		r.Context, float64(tot.BytesNoWindow)/float64(tot.Bytes), FormatSize(tot.Bytes), FormatSize(tot.BytesNoWindow))
}
