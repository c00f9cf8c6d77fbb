package cacheview_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/server"
	"github.com/kvref/kvref/stepper"
)

// postCompletion sends one completion request and returns its cached_tokens.
func postCompletion(t *testing.T, url string, body map[string]any) (int, error) {
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Usage struct {
			Details struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	err = json.NewDecoder(resp.Body).Decode(&r)
	return r.Usage.Details.Cached, err
}

// counterOf reads a counter of the page as a number.
func counterOf(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	return strings.ReplaceAll(text(t, ctx, fmt.Sprintf(`dd[data-counter=%q]`, name)), ",", "")
}

// TestBrowserServeRemembers opens kvref serve's page after a burst of requests sharing a
// prefix, in a pool small enough to evict: the page replays the server's events from the
// first one, its counters (counted from the stream) are the pool's own, the requests panel
// lists every request with the prompt tokens it reused, selecting one outlines exactly the
// blocks it held that the pool still keeps (the shared prefix among them), and each block
// shows the text of its first token.
func TestBrowserServeRemembers(t *testing.T) {
	ctx := browser(t)
	m, err := stories()
	require.NoError(t, err)
	eng, err := engine.New(m, engine.Config{BlockSize: 4, CacheBlocks: 28, Threads: 1})
	require.NoError(t, err)
	defer eng.Close()
	srv := server.New(eng, server.Options{ModelName: "stories260K"})
	loop := make(chan error, 1)
	go func() { loop <- srv.Run(context.Background()) }()
	ts := httptest.NewServer(srv.Handler())
	defer func() { ts.CloseClientConnections(); ts.Close(); srv.Close(); <-loop }()

	// The burst: one request warms the cache, then six share its prefix, two at a time.
	prefix := "Once upon a time, there was a little girl named Lily. She"
	endings := []string{" liked to play", " had a red ball", " saw a big dog", " wanted a cake", " went to the park", " found a shiny rock"}
	_, err = postCompletion(t, ts.URL, map[string]any{"prompt": prefix + " loved flowers", "max_tokens": 10, "temperature": 0})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, len(endings))
	for i := 0; i < len(endings); i += 2 {
		for _, e := range endings[i : i+2] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := postCompletion(t, ts.URL, map[string]any{"prompt": prefix + e, "max_tokens": 12, "temperature": 0.7, "seed": len(e)})
				errs <- err
			}()
		}
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	v := getView(t, ts.URL)
	require.Len(t, v.Requests, 1+len(endings))
	require.Positive(t, v.Stats.Evictions, "the burst evicts in a pool of 28 blocks")

	// The page opens after the fact: it replays every event from number 1.
	run(t, ctx, chromedp.Navigate(ts.URL+"/"))
	waitJS(t, ctx, fmt.Sprintf(`document.body.dataset.helloFrom === "0" && Number(document.body.dataset.logEvents) === %d && Number(document.body.dataset.snapshotEvents) === %[1]d`, v.Events))
	waitJS(t, ctx, `!!document.querySelector('#log li[data-n="1"]') || document.querySelectorAll('#log li[data-n]').length === 300`)
	replayed := eval[int](t, ctx, `document.querySelectorAll('#log li.replayed').length`)
	require.Equal(t, min(300, int(v.Events)), replayed, "the log shows the replayed events (its last 300)")

	// Its counters are the pool's and the scheduler's, counted from the stream.
	require.Equal(t, fmt.Sprint(v.Events), counterOf(t, ctx, "events"))
	require.Equal(t, fmt.Sprint(v.Stats.Evictions), counterOf(t, ctx, "evictions"))
	require.Equal(t, fmt.Sprint(v.Stats.CowCopies), counterOf(t, ctx, "copy-on-write copies"))
	require.Equal(t, fmt.Sprint(v.Stats.PrefixHitTokens), counterOf(t, ctx, "tokens from prefix hits"))
	require.Equal(t, fmt.Sprint(v.Engine.Preemptions), counterOf(t, ctx, "preemptions"))
	require.Equal(t, fmt.Sprint(1+len(endings)), counterOf(t, ctx, "requests finished"))

	// The requests panel: one row per request, newest first, with its reused tokens.
	rows := eval[[][2]string](t, ctx, `[...document.querySelectorAll("#requests .req-row")].map(r => [r.dataset.requestId, r.querySelector(".reused").dataset.reused])`)
	require.Len(t, rows, len(v.Requests))
	reusedAny := false
	for i, q := range v.Requests {
		require.Equal(t, [2]string{fmt.Sprint(q.ID), fmt.Sprint(q.Reused)}, rows[i])
		reusedAny = reusedAny || q.Reused > 0
	}
	require.True(t, reusedAny, "requests reused the shared prefix")

	// Select the newest request that reused blocks: the grid outlines the blocks it held
	// that the pool still keeps (not given to other tokens since, not freed), and nothing
	// else.
	var pick cacheview.Request
	for _, q := range v.Requests {
		if q.Reused > 0 {
			pick = q
			break
		}
	}
	clickRedrawn(t, ctx, fmt.Sprintf(`#requests .req-row[data-request-id="%d"] .req-head b`, pick.ID))
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('#requests .req-row[data-request-id="%d"]').classList.contains("sel")`, pick.ID))
	got := eval[[]string](t, ctx, `[...document.querySelectorAll("#grid .blk.req")].map(e => e.dataset.blockId)`)
	var want []string
	seq := pick.Sequences[0]
	for _, b := range seq.Blocks {
		if b >= 0 && !slices.Contains(seq.Stale, b) && v.Blocks[b].State != kvcache.StateFree {
			want = append(want, fmt.Sprint(b))
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got)
	// Its reused blocks are still cached and hold the shared prefix, token by token.
	shared := pick.Reused / v.BlockSize
	require.Positive(t, shared)
	var held strings.Builder
	for _, b := range seq.Blocks[:shared] {
		require.NotContains(t, seq.Stale, b)
		require.Contains(t, got, fmt.Sprint(b))
		held.WriteString(strings.Join(v.Blocks[b].Text, ""))
	}
	require.True(t, strings.HasPrefix(prefix, strings.TrimSpace(strings.TrimPrefix(held.String(), "<s>"))), "the reused blocks hold %q", held.String())

	// Each block shows its first token's text; its tooltip the full text, hash and owners.
	first := seq.Blocks[1]
	ex := text(t, ctx, fmt.Sprintf(`#grid .blk[data-block-id="%d"] .ex`, first))
	want1 := strings.TrimSpace(v.Blocks[first].Text[0])
	require.True(t, strings.HasPrefix(want1, strings.TrimSuffix(ex, "…")) && ex != "", "block %d shows %q, its first token is %q", first, ex, want1)
	title := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('#grid .blk[data-block-id="%d"]').title`, first))
	require.Contains(t, title, fmt.Sprintf("text: %q", strings.Join(v.Blocks[first].Text, "")))
	require.Contains(t, title, "hash: "+v.Blocks[first].Hash)
	shoot(t, ctx, "serve-view.png")

	// A click on a block of the shared prefix says which requests left it there.
	clickRedrawn(t, ctx, fmt.Sprintf(`#grid .blk[data-block-id="%d"]`, seq.Blocks[0]))
	story := text(t, ctx, `#detail dd[data-requests]`)
	require.Contains(t, story, fmt.Sprintf("#%d (held it as table[0])", pick.ID))
	require.Contains(t, story, "#1 (held it as table[0])", "the first request computed the prefix")

	// Live again: a burst while the page watches is counted on, in the log and the panel.
	live := make(chan error, 4)
	for i := range 4 {
		go func() {
			_, err := postCompletion(t, ts.URL, map[string]any{"prompt": prefix + endings[i], "max_tokens": 16, "n": 2, "temperature": 0.9, "seed": i})
			live <- err
		}()
	}
	for range 4 {
		require.NoError(t, <-live)
	}
	v = getView(t, ts.URL)
	waitJS(t, ctx, fmt.Sprintf(`Number(document.body.dataset.logEvents) === %d && Number(document.body.dataset.snapshotEvents) === %[1]d`, v.Events))
	require.Equal(t, fmt.Sprint(v.Events), counterOf(t, ctx, "events"))
	require.Equal(t, fmt.Sprint(v.Stats.PrefixHitTokens), counterOf(t, ctx, "tokens from prefix hits"))
	require.Equal(t, fmt.Sprint(v.Stats.Evictions), counterOf(t, ctx, "evictions"))
	require.Equal(t, fmt.Sprint(v.Stats.CowCopies), counterOf(t, ctx, "copy-on-write copies"))
	require.Equal(t, fmt.Sprint(v.Engine.Preemptions), counterOf(t, ctx, "preemptions"))
	require.Equal(t, fmt.Sprint(len(v.Requests)), counterOf(t, ctx, "requests finished"))
	require.Equal(t, fmt.Sprint(v.Requests[0].ID), eval[string](t, ctx, `document.querySelector("#requests .req-row").dataset.requestId`))
	requireFitsNarrowScreen(t, ctx, "")
}

// TestBrowserPriceItDefault: the price-it tab opens on Llama-3-8B in 80 GB (the answer of
// /v1/plan for it), the selected cache type's line is drawn strongest and on top, and the
// legend switches lines off and on.
func TestBrowserPriceItDefault(t *testing.T) {
	ctx := browser(t)
	m, err := stories()
	require.NoError(t, err)
	st, err := cacheview.NewStepper(m, "stories260K", engine.Config{BlockSize: 4, CacheBlocks: 16, Threads: 1},
		stepper.Options{Sampling: engine.Sampling{Temperature: 0, Seed: 42}})
	require.NoError(t, err)
	defer st.Close()
	ts := httptest.NewServer(st.Handler())
	defer func() { ts.CloseClientConnections(); ts.Close() }()

	run(t, ctx, chromedp.Navigate(ts.URL+"/#plan"))
	waitJS(t, ctx, `!!document.querySelector("#plan-max") && !!document.querySelector("#plan-plot polyline")`)
	require.Equal(t, "llama-3-8b", eval[string](t, ctx, `document.querySelector("#plan-preset").value`))
	require.Equal(t, "80GB", eval[string](t, ctx, `document.querySelector('#plan-form input[name="mem"]').value`))
	resp, err := http.Get(ts.URL + "/v1/plan?preset=llama-3-8b&mem=80GB&ctx=8192&block_size=16&cache_dtype=f16")
	require.NoError(t, err)
	var ans cacheview.PlanAnswer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ans))
	resp.Body.Close()
	require.Equal(t, fmt.Sprint(ans.Plan.MaxSequences), strings.ReplaceAll(text(t, ctx, "#plan-max"), ",", ""))
	require.Contains(t, text(t, ctx, "#plan-out"), "(llama-3-8b, f16 cache)")

	lines := func() [][2]string {
		return eval[[][2]string](t, ctx, `[...document.querySelectorAll("#plan-plot polyline")].map(p => [p.dataset.cacheType, p.getAttribute("stroke-width")])`)
	}
	all := lines()
	require.Greater(t, len(all), 6)
	require.Equal(t, [2]string{"f16", "4"}, all[len(all)-1], "the selected type is drawn last, thickest")
	for _, l := range all[:len(all)-1] {
		require.Equal(t, "1.4", l[1], "%s is drawn thin", l[0])
	}
	run(t, ctx, click(`.plot-legend button[data-cache-type="q8_0"]`))
	waitJS(t, ctx, `!document.querySelector('#plan-plot polyline[data-cache-type="q8_0"]')`)
	require.Len(t, lines(), len(all)-1)
	require.Equal(t, "false", eval[string](t, ctx, `document.querySelector('.plot-legend button[data-cache-type="q8_0"]').getAttribute("aria-pressed")`))
	run(t, ctx, click(`.plot-legend button[data-cache-type="q8_0"]`))
	waitJS(t, ctx, `!!document.querySelector('#plan-plot polyline[data-cache-type="q8_0"]')`)
	choose(t, ctx, `#plan-form select[name="cache_dtype"]`, "int8", "input")
	waitJS(t, ctx, `document.querySelector("#plan-plot polyline:last-of-type").dataset.cacheType === "int8"`)
	choose(t, ctx, `#plan-form select[name="cache_dtype"]`, "f16", "input")
	waitJS(t, ctx, `document.querySelector("#plan-plot polyline:last-of-type").dataset.cacheType === "f16"`)
	shoot(t, ctx, "price-it.png")
}
