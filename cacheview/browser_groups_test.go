package cacheview_test

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/stepper"
)

// TestBrowserStepViewGroups: kvref step --web on a synthetic Gemma 3 (12 layers, every
// sixth global, window 8; blocks of 4: one full cache group and five sliding ones of 2
// layers) shows the groups: a panel with each group's layers, window, blocks in use and
// blocks the window released; one block-table row per group for every sequence, the
// sliding rows with released entries (—) and the full row with none, exactly the
// snapshot's tables; every block in use marked with its group's kind; the price-it tab
// shows a Gemma preset's formula per group. Screenshots
// step-view-groups.png and step-view-group-tables.png.
func TestBrowserStepViewGroups(t *testing.T) {
	ctx := browser(t)
	m, err := synth.Shape{Name: "tiny-gemma3-groups", Arch: "gemma3", Dim: 32, Layers: 12, Heads: 2, KVHeads: 1, HeadDim: 16, Hidden: 48,
		Context: 256, RopeBase: 1e6, Seed: 3, SlidingWindow: 8}.Model()
	require.NoError(t, err)
	st, err := cacheview.NewStepper(m, "tiny-gemma3", engine.Config{BlockSize: 4, CacheBlocks: 96, Threads: 1},
		stepper.Options{Sampling: engine.Sampling{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, Seed: 42}, Check: true})
	require.NoError(t, err)
	defer st.Close()
	ts := httptest.NewServer(st.Handler())
	defer func() { ts.CloseClientConnections(); ts.Close() }()

	run(t, ctx, chromedp.Navigate(ts.URL+"/"))
	waitJS(t, ctx, `document.body.dataset.mode === "step"`)
	run(t, ctx, click("#add"))
	waitJS(t, ctx, `document.querySelectorAll("#tables .seqrow").length === 1`)
	choose(t, ctx, "#decode-n", "6", "input")
	run(t, ctx, click("#decodeN"))
	run(t, ctx, click("#fork"))
	waitJS(t, ctx, `document.querySelectorAll("#tables .seqrow").length === 2`)
	run(t, ctx, click("#decode1"))
	waitJS(t, ctx, `!!document.querySelector('#log li[data-kind="cow"]')`)

	v := getView(t, ts.URL)
	waitJS(t, ctx, fmt.Sprintf(`Number(document.body.dataset.snapshotEvents) === %d`, v.Events))
	require.Len(t, v.Stats.Groups, 6)
	type row struct {
		Group string   `json:"group"`
		Cells []string `json:"cells"`
	}
	dom := eval[map[string][]row](t, ctx, `Object.fromEntries([...document.querySelectorAll("#tables .seqrow")].map(r =>
		[r.dataset.seqId, [...r.querySelectorAll(".cells")].map(c => ({group: c.dataset.group, cells: [...c.querySelectorAll(".blk")].map(e => e.dataset.blockId)}))]))`)
	require.Len(t, dom, len(v.Sequences))
	released := 0
	for _, s := range v.Sequences {
		rows := dom[fmt.Sprint(s.ID)]
		require.Len(t, rows, len(s.Tables), "seq %d: a row per group", s.ID)
		for g, table := range s.Tables {
			var want []string
			for _, id := range table {
				want = append(want, fmt.Sprint(id))
				if id == kvcache.Hole {
					require.Positive(t, v.Stats.Groups[g].Window, "only a sliding group releases")
					released++
				}
			}
			require.Equal(t, fmt.Sprint(g), rows[g].Group)
			require.Equal(t, want, rows[g].Cells, "seq %d group %d", s.ID, g)
		}
	}
	require.Positive(t, released, "the sliding groups released blocks the window left")
	panel := text(t, ctx, "#groups")
	require.Contains(t, panel, "6 cache groups of 2 layers")
	require.Contains(t, panel, "held by the global layers")
	require.Contains(t, panel, "released by the window")
	require.Equal(t, 6, eval[int](t, ctx, `document.querySelectorAll("#groups table.groups tr").length - 1`))
	marked := eval[int](t, ctx, `document.querySelectorAll("#grid .blk.g-sliding, #grid .blk.g-full").length`)
	require.Equal(t, v.Stats.BlocksUsed+v.Stats.BlocksCached, marked, "every block in use or cached shows its group's kind")
	shoot(t, ctx, "step-view-groups.png")
	run(t, ctx, chromedp.EmulateViewport(1280, 1500)) // the block tables below the pool
	shoot(t, ctx, "step-view-group-tables.png")

	// Price it with a Gemma preset: the formula per group.
	run(t, ctx, chromedp.EmulateViewport(1280, 800))
	run(t, ctx, click("#tab-plan"))
	waitJS(t, ctx, `!!document.querySelector("#plan-max")`)
	choose(t, ctx, "#plan-preset", "gemma-3-1b", "change")
	waitJS(t, ctx, `(document.querySelector("#plan-groups") || {innerText: ""}).innerText.includes("22 sliding")`)
	require.Equal(t, 3, eval[int](t, ctx, `document.querySelectorAll("#plan-groups tr").length`))
}
