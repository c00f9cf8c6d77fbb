package cacheview_test

// The page in a real browser: headless Chromium (Debian's chromium; .ci/run installs it)
// driven with chromedp against kvref serve's handler and kvref step --web's, both on the
// embedded stories260K. The tests skip, saying why, only when no chromium binary exists.
//
// Screenshots go to a temporary directory, or with KVREF_SCREENSHOTS=DIR to DIR:
//
//	KVREF_SCREENSHOTS=$PWD/docs/img go test ./cacheview -run Browser
//
// regenerates the pictures of the README and the tutorial.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model/builtin"
	"github.com/kvref/kvref/quant"
	"github.com/kvref/kvref/server"
	"github.com/kvref/kvref/stepper"
)

var stories = sync.OnceValues(builtin.Model)

// chromium finds the browser: $KVREF_CHROMIUM, /usr/bin/chromium, or chromium on PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the browser tests are a long suite: they run in the full go test (.ci/run), not with -short")
	}
	for _, p := range []string{os.Getenv("KVREF_CHROMIUM"), "/usr/bin/chromium"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium binary (/usr/bin/chromium, or KVREF_CHROMIUM): apt-get install chromium to run the browser tests (.ci/run does)")
	return ""
}

// browser starts headless Chromium with the flags this machine needs (no network beyond
// loopback, a fresh profile) and a 1280×800 window, and returns a tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelB(); cancelA() })
	run(t, ctx, chromedp.EmulateViewport(1280, 800))
	return ctx
}

// run runs browser actions that must succeed.
func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// clickRedrawn clicks an element of a part of the page that redraws itself whenever a
// snapshot arrives (the block grid): the node found can be replaced before the click lands
// ("Could not find node with given id"), so the click is retried on a fresh node, a few
// times. Each try waits at most two seconds for sel to match, and an element that a redraw
// removed for good fails at once, rather than at the test's own deadline.
func clickRedrawn(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	var err error
	for range 20 {
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = chromedp.Do(try, click(sel))
		cancel()
		if err == nil {
			return
		}
		if eval[bool](t, ctx, fmt.Sprintf(`document.querySelector(%q) === null`, sel)) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err, "click %s", sel)
}

// click clicks the element sel (a CSS selector) with the mouse.
func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

// choose sets a select or input to value and tells the page, as a person's change would.
func choose(t *testing.T, ctx context.Context, sel, value, event string) {
	t.Helper()
	eval[chromedp.Void](t, ctx, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event(%q, {bubbles: true})); })()`, sel, value, event))
}

// text is an element's visible text.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return eval[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).innerText`, sel))
}

// shoot saves a screenshot of the viewport (what a person sees first) as name.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("KVREF_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	run(t, ctx, chromedp.Sleep(1200*time.Millisecond)) // the flashes fade
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot %s (%d bytes)", path, len(png))
}

// domView is what the page shows: every grid block's id and state, every table row.
type domView struct {
	Grid   [][2]string         `json:"grid"`   // [data-block-id, data-state]
	Tables map[string][]string `json:"tables"` // data-seq-id → the row's data-block-id values
	Drawn  json.RawMessage     `json:"drawn"`  // the snapshot the page drew (window.kvrefView)
}

// readDOM reads the grid, the tables and the snapshot they were drawn from in one script
// (the page cannot redraw in between).
func readDOM(t *testing.T, ctx context.Context) domView {
	t.Helper()
	return eval[domView](t, ctx, `({
		grid: [...document.querySelectorAll("#grid .blk")].map(e => [e.dataset.blockId, e.dataset.state]),
		tables: Object.fromEntries([...document.querySelectorAll("#tables .seqrow")].map(r =>
			[r.dataset.seqId, [...r.querySelectorAll(".blk")].map(e => e.dataset.blockId)])),
		drawn: window.kvrefView,
	})`)
}

// requireDOMShows holds the DOM to a snapshot: one grid cell per block with its state, one
// row per sequence with its table (holes as -1).
func requireDOMShows(t *testing.T, d domView, v cacheview.View) {
	t.Helper()
	require.Len(t, d.Grid, len(v.Blocks))
	for i, b := range v.Blocks {
		require.Equal(t, [2]string{fmt.Sprint(b.ID), string(b.State)}, d.Grid[i], "grid cell %d", i)
	}
	require.Len(t, d.Tables, len(v.Sequences))
	for _, s := range v.Sequences {
		var want []string
		for _, id := range s.Table {
			want = append(want, fmt.Sprint(id))
		}
		require.Equal(t, want, d.Tables[fmt.Sprint(s.ID)], "seq %d", s.ID)
	}
}

// getView fetches GET /v1/cache.
func getView(t *testing.T, url string) cacheview.View {
	t.Helper()
	resp, err := http.Get(url + "/v1/cache")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var v cacheview.View
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	return v
}

// waitJS waits until a JavaScript expression is true.
func waitJS(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if eval[bool](t, ctx, expr) {
			return
		}
		if time.Now().After(deadline) {
			log := eval[string](t, ctx, `JSON.stringify({seen: state.seen, dropped: state.dropped, status: document.querySelector("#status").className,
				sequences: window.kvrefView && window.kvrefView.sequences.map(s => [s.id, s.len]), narration: document.querySelector("#narration").innerText}) +
				"\n" + document.querySelector("#log").innerText.slice(0, 2000)`)
			require.FailNow(t, fmt.Sprintf("timed out waiting for %s; the page's event log:\n%s", expr, log))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// requireFitsNarrowScreen shows the page on a phone-sized viewport: nothing may stick out
// sideways.
func requireFitsNarrowScreen(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Sleep(300*time.Millisecond))
	overflow := eval[int](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`)
	require.LessOrEqual(t, overflow, 0, "the page is wider than a 390-pixel screen")
	if name != "" {
		shoot(t, ctx, name)
	}
	run(t, ctx, chromedp.EmulateViewport(1280, 800))
}

// TestBrowserServeView loads the page of a running kvref serve, sends real requests, and
// holds what it shows to /v1/cache and /v1/cache to the pool's own Stats and Blocks: live
// sequences while a request runs; then two requests sharing a prefix (the second reuses the
// first's blocks) and a fork whose first write copies on write, in the event log.
func TestBrowserServeView(t *testing.T) {
	ctx := browser(t)
	m, err := stories()
	require.NoError(t, err)
	eng, err := engine.New(m, engine.Config{BlockSize: 4, CacheBlocks: 160, Threads: 1})
	require.NoError(t, err)
	defer eng.Close()
	// Check recomputes every step without the cache, which keeps a long request running
	// long enough to be watched.
	srv := server.New(eng, server.Options{ModelName: "stories260K", Check: true})
	loop := make(chan error, 1)
	go func() { loop <- srv.Run(context.Background()) }()
	ts := httptest.NewServer(srv.Handler())
	defer func() { ts.CloseClientConnections(); ts.Close(); srv.Close(); <-loop }()

	run(t, ctx, chromedp.Navigate(ts.URL+"/"))
	waitJS(t, ctx, `document.body.dataset.mode === "serve" && !!document.querySelector("#grid .blk")`)

	complete := func(ctx context.Context, body map[string]any) (map[string]any, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/completions", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("status %d: %s", resp.StatusCode, out)
		}
		var r map[string]any
		return r, json.Unmarshal(out, &r)
	}

	// freeze holds the engine loop in an op until release is called: no step runs, and the
	// page's snapshot fetches wait, so what the page drew stays what it drew.
	freeze := func() (release func()) {
		frozen, thaw, failed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			failed <- srv.Inspect(context.Background(), func(*engine.Engine) { close(frozen); <-thaw })
		}()
		select {
		case <-frozen:
		case err := <-failed:
			require.NoError(t, err, "freezing the engine loop")
		}
		return sync.OnceFunc(func() { close(thaw) })
	}

	// Live sequences: a long request (three continuations, every step checked against the
	// reference, which keeps it running for a while) is drawn as it runs. It can reach the
	// model's 512-token context before a slow browser looks (a loaded machine): a choice that
	// has ended keeps its blocks cached, outlined in the grid but in no live table, so the
	// look is retried on a fresh request until none has ended.
	for attempt := 1; ; attempt++ {
		if liveSelection(t, ctx, freeze, complete) {
			break
		}
		require.Less(t, attempt, 4, "the long request's choices ended before the page was read, %d times", attempt)
		waitJS(t, ctx, `document.querySelectorAll("#tables .seqrow").length === 0`)
	}

	// Two requests sharing a prefix, the first with two continuations whose first writes land
	// in the shared, partly filled last block of its 11-token prompt: copy-on-write.
	first, err := complete(context.Background(), map[string]any{"prompt": "Once upon a time, there was a dog", "max_tokens": 6, "n": 2, "temperature": 0.8, "seed": 3})
	require.NoError(t, err)
	second, err := complete(context.Background(), map[string]any{"prompt": "Once upon a time, there was a cat", "max_tokens": 6, "temperature": 0})
	require.NoError(t, err)
	cached := second["usage"].(map[string]any)["prompt_tokens_details"].(map[string]any)["cached_tokens"].(float64)
	require.Positive(t, cached, "the second request reused the first's blocks: %v", first["usage"])

	// Quiet now: /v1/cache, the pool's own accounts and the page must agree.
	var stats kvcache.Stats
	var blocks []kvcache.BlockState
	var published int64
	require.NoError(t, srv.Inspect(context.Background(), func(e *engine.Engine) {
		stats, blocks = e.Pool().Stats(), e.Pool().Blocks()
	}))
	v := getView(t, ts.URL)
	published = v.Events
	require.Equal(t, stats, v.Stats)
	require.Len(t, v.Blocks, len(blocks))
	for i, b := range blocks {
		require.Equal(t, b.Ref, v.Blocks[i].Ref, "block %d", i)
		require.Equal(t, b.Filled, v.Blocks[i].Filled, "block %d", i)
		require.Equal(t, b.Hash, v.Blocks[i].Hash, "block %d", i)
		require.Equal(t, b.Cached, v.Blocks[i].State == kvcache.StateCached, "block %d", i)
	}
	require.Empty(t, v.Sequences)
	// The page has drawn the last snapshot and its log has every event up to it (the
	// stream and the snapshot travel apart).
	waitJS(t, ctx, fmt.Sprintf(`Number(document.body.dataset.snapshotEvents) === %d && Number(document.body.dataset.logEvents) === %[1]d`, published))
	d := readDOM(t, ctx)
	requireDOMShows(t, d, v)

	// The event log shows the prefix hit and the copy-on-write, with the tokens reused.
	logOf := func(kind string) []string {
		return eval[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('#log li[data-kind=%q]')].map(e => e.innerText)`, kind))
	}
	hits, cows, admits := logOf("prefix_hit"), logOf("cow"), logOf("admit")
	require.NotEmpty(t, hits)
	require.Contains(t, hits[0], "4 tokens not recomputed")
	require.NotEmpty(t, cows)
	require.Contains(t, cows[0], "copy-on-write")
	require.Contains(t, admits[0], fmt.Sprintf("%d from the cache", int(cached)))
	counter := text(t, ctx, `dd[data-counter="tokens from prefix hits"]`)
	require.Equal(t, fmt.Sprint(v.Stats.PrefixHitTokens), strings.ReplaceAll(counter, ",", ""))

	// A block's details on click: its tokens as text and ids.
	clickRedrawn(t, ctx, `#grid .blk[data-block-id="0"]`)
	detail := text(t, ctx, "#detail")
	require.Contains(t, detail, `" Once"`)
	require.Contains(t, detail, "403")
	requireFitsNarrowScreen(t, ctx, "")
}

// TestBrowserStepView drives kvref step --web's page with its buttons: add, decode N with
// attention, fork, decode (copy-on-write), the tutorial's eviction walk, and the price-it
// panel; the DOM agrees with /v1/cache and /v1/cache with the pool after every command.
func TestBrowserStepView(t *testing.T) {
	ctx := browser(t)
	m, err := stories()
	require.NoError(t, err)
	st, err := cacheview.NewStepper(m, "stories260K", engine.Config{BlockSize: 4, CacheBlocks: 16, Threads: 1},
		stepper.Options{Sampling: engine.Sampling{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, Seed: 42}, Check: true})
	require.NoError(t, err)
	defer st.Close()
	ts := httptest.NewServer(st.Handler())
	defer func() { ts.CloseClientConnections(); ts.Close() }()

	agree := func() cacheview.View {
		t.Helper()
		v := getView(t, ts.URL)
		st.Inspect(func(e *engine.Engine) {
			require.Equal(t, e.Pool().Stats(), v.Stats)
			for i, b := range e.Pool().Blocks() {
				require.Equal(t, b.Ref, v.Blocks[i].Ref)
			}
			require.NoError(t, e.Pool().Check())
		})
		waitJS(t, ctx, fmt.Sprintf(`Number(document.body.dataset.snapshotEvents) === %d`, v.Events))
		requireDOMShows(t, readDOM(t, ctx), v)
		return v
	}
	rows := func(n int) string {
		return fmt.Sprintf(`document.querySelectorAll("#tables .seqrow").length === %d`, n)
	}

	run(t, ctx, chromedp.Navigate(ts.URL+"/"))
	waitJS(t, ctx, `document.body.dataset.mode === "step"`)
	run(t, ctx, click("#add"))
	waitJS(t, ctx, rows(1))
	v := agree()
	require.Equal(t, []int{0, 1}, v.Sequences[0].Table)

	// Attention on layer 2 (the mean over heads), then decode 4: the heatmap covers
	// positions 0..8 over blocks 0, 1, 2.
	choose(t, ctx, "#attn-layer", "2", "change")
	waitJS(t, ctx, `window.kvrefView.step.attention_layer === 2`)
	choose(t, ctx, "#decode-n", "4", "input")
	run(t, ctx, click("#decodeN"))
	waitJS(t, ctx, `document.querySelectorAll("#attn-map .attn-slot[data-pos]").length === 9`)
	top := eval[int](t, ctx, `document.querySelectorAll("#topk .alt").length`)
	tok := text(t, ctx, "#last-step .tok")
	weights := eval[[]string](t, ctx, `[...document.querySelectorAll("#attn-map .attn-block")].map(b => b.dataset.blockId)`)
	require.Equal(t, 8, top)
	require.Equal(t, `" a"`, tok, "the tutorial's fourth token with seed 42")
	require.Equal(t, []string{"0", "1", "2"}, weights)
	agree()

	// Fork, and decode on the fork: copy-on-write of the shared block 2.
	run(t, ctx, click("#fork"))
	waitJS(t, ctx, rows(2))
	v = agree()
	require.Equal(t, kvcache.StateShared, v.Blocks[2].State)
	run(t, ctx, click("#decode1"))
	waitJS(t, ctx, `!!document.querySelector('#log li[data-kind="cow"]')`)
	v = agree()
	require.Equal(t, []int{0, 1, 3}, v.Sequences[1].Table)
	require.Equal(t, int64(1), v.Stats.CowCopies)
	shoot(t, ctx, "step-view.png")

	// The tutorial's eviction walk, by clicking.
	run(t, ctx, click("#tut-evict"))
	waitJS(t, ctx, `document.body.dataset.walkStep === "evict:1"`)
	for i := 2; i <= 4; i++ {
		run(t, ctx, click("#tut-next"))
		waitJS(t, ctx, fmt.Sprintf(`document.body.dataset.walkStep === "%s:%d"`, map[bool]string{true: "done", false: "evict"}[i == 4], i))
	}
	narration := text(t, ctx, "#narration")
	require.Contains(t, narration, "4 of them from the cache")
	v = agree()
	require.Equal(t, int64(3), v.Stats.Evictions, "two for the long prompt, one when the first prompt comes back")
	evicts := eval[int](t, ctx, `document.querySelectorAll('#log li[data-kind="evict"]').length`)
	require.GreaterOrEqual(t, evicts, 2)
	requireFitsNarrowScreen(t, ctx, "")

	// Price it: the numbers come from /v1/plan.
	run(t, ctx, click("#tab-plan"))
	waitJS(t, ctx, `!!document.querySelector("#plan-max") && !!document.querySelector("#plan-plot polyline")`)
	choose(t, ctx, "#plan-preset", "llama-3-8b", "change")
	choose(t, ctx, `#plan-form input[name="mem"]`, "80GB", "input")
	resp, err := http.Get(ts.URL + "/v1/plan?preset=llama-3-8b&mem=80GB&ctx=8192&block_size=16&cache_dtype=f16")
	require.NoError(t, err)
	var ans cacheview.PlanAnswer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ans))
	resp.Body.Close()
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector("#plan-max").textContent === %q`, fmt.Sprint(ans.Plan.MaxSequences)))
	lines := eval[int](t, ctx, `document.querySelectorAll("#plan-plot polyline").length`)
	require.Equal(t, len(quant.CacheTypes()), lines, "one line per cache dtype")
	shoot(t, ctx, "price-it.png")
	requireFitsNarrowScreen(t, ctx, "")
}

// liveSelection sends a long request of three continuations, waits until the page draws
// them, holds the engine still (freeze) so that what the page drew stays what the engine
// holds while the page is read, selects the request in the requests panel and checks that
// its live sequences' rows of the block tables and, in the grid, exactly the blocks of their
// tables are outlined; then it cuts the request off. It returns false, checking nothing,
// when the page never drew all three continuations live (a fast machine runs them to their
// end, or a preemption, between two of the page's looks), or when a continuation had
// already ended in the snapshot the page drew (its blocks stay cached and outlined, in no
// live table).
func liveSelection(t *testing.T, ctx context.Context, freeze func() (release func()), complete func(context.Context, map[string]any) (map[string]any, error)) bool {
	t.Helper()
	long, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := complete(long, map[string]any{"prompt": "Once upon a time, there was a little girl named Lily.", "max_tokens": 500,
			"n": 3, "ignore_eos": true, "temperature": 0.8, "seed": 1})
		done <- err
	}()
	release := func() {}
	defer func() {
		release()
		stop()
		<-done
	}()
	const threeLive = `document.querySelectorAll("#tables .seqrow").length === 3 && window.kvrefView.sequences.every(s => s.len > 60)`
	for deadline := time.Now().Add(30 * time.Second); ; {
		select {
		case err := <-done:
			done <- err // for the deferred receive
			t.Logf("retrying: the long request ended (%v) before the page drew its three continuations live", err)
			return false
		default:
		}
		require.True(t, time.Now().Before(deadline), "the page drew no three live continuations in 30 s")
		if eval[bool](t, ctx, threeLive) {
			release = freeze()
			// A snapshot taken before the freeze may still be on its way to the page.
			time.Sleep(300 * time.Millisecond)
			if eval[bool](t, ctx, threeLive) {
				break
			}
			release()
			release = func() {}
		}
		time.Sleep(50 * time.Millisecond)
	}
	d := readDOM(t, ctx)
	var drawn cacheview.View
	require.NoError(t, json.Unmarshal(d.Drawn, &drawn))
	requireDOMShows(t, d, drawn)
	if len(drawn.Sequences) != 3 {
		return false
	}
	for _, s := range drawn.Sequences {
		require.NotNil(t, s.Request, "seq %d is labelled with its request", s.ID)
	}
	if eval[int](t, ctx, `document.querySelectorAll('#requests .req-row[data-state="running"]').length`) == 0 {
		return false
	}
	clickRedrawn(t, ctx, `#requests .req-row[data-state="running"] .req-head b`)
	waitJS(t, ctx, `document.querySelectorAll("#tables .seqrow.req").length > 0 && document.querySelectorAll("#tables .seqrow.req").length === document.querySelectorAll("#tables .seqrow").length || document.querySelectorAll('#requests .req-row[data-state="running"]').length === 0`)
	// One read of the page as one snapshot drew it: the outlines, and whether every
	// continuation of the selected request was still running in that snapshot (or waiting
	// after a preemption, holding no block: three continuations of 300 tokens outgrow the
	// 160 blocks of 4).
	sel := eval[struct {
		Grid, Tables []string
		Running      bool
	}](t, ctx, `({grid: [...document.querySelectorAll("#grid .blk.req")].map(e => e.dataset.blockId).sort(),
		tables: [...new Set([...document.querySelectorAll("#tables .seqrow .blk")].map(e => e.dataset.blockId).filter(id => id !== "-1"))].sort(),
		running: (() => { const q = (window.kvrefView.requests || []).find(r => r.id === state.request);
			return !!q && q.state === "running" && q.sequences.some(s => s.state === "running") &&
				q.sequences.every(s => s.state === "running" || s.state === "preempted"); })()})`)
	if !sel.Running {
		t.Logf("retrying: a continuation had ended in the snapshot the page drew: %s", eval[string](t, ctx, `JSON.stringify([(window.kvrefView.requests || []).find(r => r.id === state.request), window.kvrefView.sequences.map(s => [s.id, s.len])])`))
		return false
	}
	require.NotEmpty(t, sel.Grid)
	require.Equal(t, sel.Tables, sel.Grid, "the grid outlines the blocks of the request's tables")
	shoot(t, ctx, "serve-live.png")
	// The request is cut off here, unless it reached its last token while the screenshot
	// was taken (a fast machine): either way it has ended when the deferred receive
	// returns. That a cut-off frees the request's blocks is server's TestCancelFreesBlocks.
	return true
}
