package cacheview_test

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/stepper"
)

// TestBrowserStepUndo: after the tutorial's eviction walk the "Last step" panel says the
// sequence it described was freed (no literal null); Undo by its button takes back a decode
// and a fork: the page's pool, tables and log are those of before, and the panel shows the
// step before again.
func TestBrowserStepUndo(t *testing.T) {
	ctx := browser(t)
	m, err := stories()
	require.NoError(t, err)
	st, err := cacheview.NewStepper(m, "stories260K", engine.Config{BlockSize: 4, CacheBlocks: 16, Threads: 1},
		stepper.Options{Check: true})
	require.NoError(t, err)
	defer st.Close()
	ts := httptest.NewServer(st.Handler())
	defer func() { ts.CloseClientConnections(); ts.Close() }()

	run(t, ctx, chromedp.Navigate(ts.URL+"/"))
	waitJS(t, ctx, `document.body.dataset.mode === "step"`)
	run(t, ctx, click("#tut-evict"))
	waitJS(t, ctx, `document.body.dataset.walkStep === "evict:1"`)
	for i := 2; i <= 4; i++ {
		run(t, ctx, click("#tut-next"))
		waitJS(t, ctx, fmt.Sprintf(`document.body.dataset.walkStep === "%s:%d"`, map[bool]string{true: "done", false: "evict"}[i == 4], i))
	}
	last := text(t, ctx, "#last-step")
	require.NotContains(t, last, "null")
	require.Contains(t, last, "seq 0 was freed")

	// Decode 1 on the live sequence, then fork: two commands to take back.
	before := getView(t, ts.URL)
	waitJS(t, ctx, fmt.Sprintf(`Number(document.body.dataset.snapshotEvents) === %d`, before.Events))
	run(t, ctx, click("#decode1"))
	waitJS(t, ctx, `!!document.querySelector("#last-step .tok")`)
	// The panel is read once the page has drawn the snapshot after the decode (the event
	// arrives first; the sequence's text comes with the snapshot).
	afterDecode := getView(t, ts.URL)
	waitJS(t, ctx, fmt.Sprintf(`Number(document.body.dataset.snapshotEvents) === %d`, afterDecode.Events))
	step := text(t, ctx, "#last-step")
	run(t, ctx, click("#fork"))
	waitJS(t, ctx, `document.querySelectorAll("#tables .seqrow").length === 2`)

	run(t, ctx, click("#undo"))
	waitJS(t, ctx, `document.querySelectorAll("#tables .seqrow").length === 1`)
	v := getView(t, ts.URL)
	require.Equal(t, afterDecode.Blocks, v.Blocks)
	require.Equal(t, afterDecode.Sequences, v.Sequences)
	require.Equal(t, afterDecode.Stats, v.Stats)
	waitJS(t, ctx, fmt.Sprintf(`Number(document.body.dataset.snapshotEvents) === %d`, v.Events))
	require.Equal(t, step, text(t, ctx, "#last-step"), "the panel shows the decode again")

	run(t, ctx, click("#undo"))
	waitJS(t, ctx, `!document.querySelector("#last-step .tok")`)
	require.Contains(t, text(t, ctx, "#last-step"), "No step of a live sequence to show")
	v = getView(t, ts.URL)
	require.Equal(t, before.Blocks, v.Blocks)
	require.Equal(t, before.Sequences, v.Sequences)
	require.Equal(t, before.Stats, v.Stats)
	newest := eval[int64](t, ctx, `Math.max(0, ...[...document.querySelectorAll("#log li")].map((li) => Number(li.dataset.n)))`)
	require.LessOrEqual(t, newest, before.Events, "the log forgets the events of the commands taken back")
	require.NotContains(t, text(t, ctx, "#last-step"), "null")
	shoot(t, ctx, "step-undo.png")
}
