package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model/synth"
)

// sseReader reads a /v1/cache/events stream in the background.
type sseReader struct {
	mu      sync.Mutex
	events  []cacheview.Event
	dropped int64
	from    int64 // the events published before the stream began (its hello)
	hello   bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// watch opens the event stream and reads it until the test ends (or stop).
func (ts *testServer) watch(t *testing.T) *sseReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/v1/cache/events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	r := &sseReader{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var kind string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data := []byte(strings.TrimPrefix(line, "data: "))
				r.mu.Lock()
				switch kind {
				case "hello":
					var h struct{ Published int64 }
					json.Unmarshal(data, &h)
					r.hello, r.from = true, h.Published
				case "cache":
					var e cacheview.Event
					if json.Unmarshal(data, &e) == nil {
						r.events = append(r.events, e)
					}
				case "dropped":
					var d struct{ Dropped int64 }
					json.Unmarshal(data, &d)
					r.dropped += d.Dropped
				}
				r.mu.Unlock()
			}
		}
	}()
	t.Cleanup(r.stop)
	return r
}

func (r *sseReader) stop() { r.cancel(); <-r.done }

// waitFor waits until the reader has every event up to number upTo.
func (r *sseReader) waitFor(t *testing.T, upTo int64) []cacheview.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		hello := r.hello
		r.mu.Unlock()
		if hello {
			break
		}
		require.True(t, time.Now().Before(deadline), "the stream said no hello")
		time.Sleep(5 * time.Millisecond)
	}
	n := upTo - r.from
	deadline = time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		got := len(r.events)
		evs := append([]cacheview.Event(nil), r.events...)
		r.mu.Unlock()
		if int64(got) >= n {
			return evs
		}
		require.True(t, time.Now().Before(deadline), "the stream has %d of %d events", got, n)
		time.Sleep(5 * time.Millisecond)
	}
}

// view fetches GET /v1/cache.
func (ts *testServer) view(t *testing.T) cacheview.View {
	t.Helper()
	status, body := ts.get(t, "/v1/cache")
	require.Equal(t, http.StatusOK, status, string(body))
	var v cacheview.View
	require.NoError(t, json.Unmarshal(body, &v))
	return v
}

// TestCacheViewFollowsRequests: two requests sharing a prefix, the first with two
// continuations. The stream carries the admissions, the prefix hit of the second request
// (its cached_tokens), the fork and the copy-on-write, numbered 1, 2, ...; the snapshot
// equals the pool's own accounts and counts the events it reflects.
func TestCacheViewFollowsRequests(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 4, CacheBlocks: 64}, Options{})
	events := ts.watch(t)
	v := ts.view(t)
	require.Equal(t, "serve", v.Mode)
	require.Zero(t, v.Events)
	require.Equal(t, 64, v.BlocksTotal)
	require.Equal(t, 4, v.BlockSize)
	// synth.Tiny: 2 layers, 2 KV heads of 8, f32: 2 · 2 · 2 · 8 · 4 = 256 B per token.
	require.EqualValues(t, 256, v.BytesPerToken)
	require.Equal(t, 4, v.ElementBytes)
	require.EqualValues(t, 64*4*256, v.BytesTotal)
	require.Equal(t, 64, v.BlocksPerSequence, "a 256-token context in blocks of 4")
	require.EqualValues(t, 1, v.SequencesFit)

	prompt := []int{1, 10, 11, 12, 13, 14, 15, 16, 17, 18} // 10 tokens: two full blocks and half of a third
	first := ts.complete(t, map[string]any{"prompt": prompt, "max_tokens": 3, "n": 2, "temperature": 0})
	require.Zero(t, first.Usage.PromptTokensDetails.CachedTokens)
	second := ts.complete(t, map[string]any{"prompt": append(prompt[:8:8], 40, 41, 42), "max_tokens": 2, "temperature": 0})
	require.Equal(t, 8, second.Usage.PromptTokensDetails.CachedTokens)

	v = ts.view(t)
	evs := events.waitFor(t, v.Events)
	require.Len(t, evs, int(v.Events), "the snapshot reflects every event sent so far")
	for i, e := range evs {
		require.Equal(t, int64(i+1), e.N)
	}
	var admits []cacheview.Event
	kinds := map[string]int{}
	for _, e := range evs {
		kinds[e.Kind]++
		if e.Kind == "admit" {
			admits = append(admits, e)
		}
	}
	require.Len(t, admits, 2)
	require.Equal(t, 0, admits[0].Computed)
	require.Equal(t, 8, admits[1].Computed, "the second request's cached_tokens")
	require.Equal(t, 2, kinds["prefix_hit"], "two blocks of 4 reused")
	require.Equal(t, 1, kinds["fork_seq"])
	require.Equal(t, 3, kinds["fork"], "the fork shares the prompt's three blocks")
	require.Equal(t, 1, kinds["cow"], "one sibling's first write copies the shared third block")
	for _, e := range evs {
		if e.Kind == "prefix_hit" {
			require.Equal(t, admits[1].Seq, e.Seq)
			require.Equal(t, 4, e.Slots)
		}
	}

	// The snapshot is the pool's own state.
	var stats kvcache.Stats
	var blocks []kvcache.BlockState
	var preempt int
	require.NoError(t, ts.Inspect(context.Background(), func(e *engine.Engine) {
		stats, blocks = e.Pool().Stats(), e.Pool().Blocks()
		preempt = ts.sched.Stats().Preemptions
	}))
	require.Equal(t, stats, v.Stats)
	require.Equal(t, int64(8), v.Stats.PrefixHitTokens)
	require.Equal(t, int64(1), v.Stats.CowCopies)
	require.NotNil(t, v.Engine)
	require.Equal(t, preempt, v.Engine.Preemptions)
	for i, b := range blocks {
		require.Equal(t, b.Ref, v.Blocks[i].Ref)
		require.Equal(t, b.Hash, v.Blocks[i].Hash)
		require.Equal(t, b.Cached, v.Blocks[i].State == kvcache.StateCached)
	}
	// The cached prompt blocks hold the prompt's tokens, slot by slot.
	hit := evs[0]
	for _, e := range evs {
		if e.Kind == "prefix_hit" && e.Index == 1 {
			hit = e
		}
	}
	require.Equal(t, []int{13, 14, 15, 16}, v.Blocks[hit.Block].Tokens, "positions 4-7")
	require.Equal(t, kvcache.StateCached, v.Blocks[hit.Block].State)
}

// TestCacheViewEndpoints: the page, its assets, the methods and the errors.
func TestCacheViewEndpoints(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	status, body := ts.get(t, "/")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, string(body), "the KV cache you can watch")
	resp, err := http.Get(ts.URL + "/assets/app.js")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "javascript")
	status, _ = ts.get(t, "/assets/nothing.js")
	require.Equal(t, http.StatusNotFound, status)

	status, body = ts.post(t, "/v1/cache", map[string]any{})
	require.Equal(t, http.StatusMethodNotAllowed, status, string(body))
	status, body = ts.post(t, "/v1/cache/events", map[string]any{})
	require.Equal(t, http.StatusMethodNotAllowed, status, string(body))
	status, _ = ts.get(t, "/v1/nothing")
	require.Equal(t, http.StatusNotFound, status, "the API's own 404 still answers unknown paths")

	status, body = ts.get(t, "/v1/plan?layers=abc&kv_heads=8&head_dim=128&mem=1GB")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, string(body), "layers must be a whole number")
	status, body = ts.get(t, "/v1/plan?mem=1GB")
	require.Equal(t, http.StatusOK, status, string(body))
	var ans cacheview.PlanAnswer
	require.NoError(t, json.Unmarshal(body, &ans))
	require.Equal(t, ts.Model(), ans.Plan.Model.Name, "without a preset the plan is this model's")
	require.Equal(t, "the model's tensors", ans.Plan.WeightsFrom)
	require.EqualValues(t, ts.model.Weights.Bytes(), ans.Plan.WeightsBytes)
	require.EqualValues(t, 2*2*2*8*2, ans.Plan.BytesPerToken, "f16 by default: 2 · 2 layers · 2 KV heads · 8 · 2 B")
}

// TestCacheViewUnderLoad: many clients and viewers at once — event streams that keep up,
// one that reads nothing, and pollers of /v1/cache. Every snapshot is consistent, every
// request gets the tokens it gets alone, and the engine never waits for a viewer (run with
// -race).
func TestCacheViewUnderLoad(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 4, CacheBlocks: 256}, Options{})
	prompts := make([][]int, 12)
	for i := range prompts {
		prompts[i] = []int{1, 20, 21, 22, 23, 24, 25, 30 + i%3, 40 + i}
	}
	body := func(i int) map[string]any {
		return map[string]any{"prompt": prompts[i], "max_tokens": 24, "n": 1 + i%2, "temperature": 0.7, "seed": i, "ignore_eos": true}
	}
	alone := make([]string, len(prompts))
	for i := range prompts {
		r := ts.complete(t, body(i))
		for _, c := range r.Choices {
			alone[i] += c.Text + "|"
		}
	}

	readers := []*sseReader{ts.watch(t), ts.watch(t)}
	// A viewer that never reads: its stream stalls, the engine must not.
	stalled, err := http.Get(ts.URL + "/v1/cache/events")
	require.NoError(t, err)
	defer stalled.Body.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(ts.URL + "/v1/cache")
				if err != nil {
					errs <- err
					return
				}
				var v cacheview.View
				err = json.NewDecoder(resp.Body).Decode(&v)
				resp.Body.Close()
				if err == nil {
					err = consistent(v)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	got := make([]string, len(prompts))
	var clients sync.WaitGroup
	for i := range prompts {
		clients.Add(1)
		go func() {
			defer clients.Done()
			status, out := ts.post(t, "/v1/completions", body(i))
			if status != http.StatusOK {
				errs <- fmt.Errorf("request %d: %d %s", i, status, out)
				return
			}
			var r CompletionResponse
			if err := json.Unmarshal(out, &r); err != nil {
				errs <- err
				return
			}
			for _, c := range r.Choices {
				got[i] += c.Text + "|"
			}
		}()
	}
	clients.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, alone, got, "viewers change nothing in what requests get")
	v := ts.view(t)
	for _, r := range readers {
		evs := r.waitFor(t, v.Events)
		require.Len(t, evs, int(v.Events-r.from), "a viewer that keeps up gets every event")
		for i, e := range evs {
			require.Equal(t, r.from+int64(i)+1, e.N)
		}
	}
	require.NoError(t, consistent(v))
}

// consistent is View.Check, and every live sequence is labelled with its request.
func consistent(v cacheview.View) error {
	if err := v.Check(); err != nil {
		return err
	}
	for _, q := range v.Sequences {
		if q.Request == nil {
			return fmt.Errorf("seq %d has no request", q.ID)
		}
	}
	return nil
}

// TestCacheViewSlidingWindow: with a sliding window in every layer, the stream reports
// each block a sequence slides past (reclaim), as many as the pool counts.
func TestCacheViewSlidingWindow(t *testing.T) {
	ts := start(t, synth.Variants["mistral-sliding-window"], engine.Config{BlockSize: 4, CacheBlocks: 32}, Options{})
	events := ts.watch(t)
	ts.complete(t, map[string]any{"prompt": []int{1, 5, 6, 7, 8, 9}, "max_tokens": 40, "ignore_eos": true, "temperature": 0})
	v := ts.view(t)
	require.Equal(t, 8, v.Model.SlidingWindow)
	reclaimed := 0
	for _, e := range events.waitFor(t, v.Events) {
		if e.Kind == "reclaim" {
			reclaimed++
			require.GreaterOrEqual(t, e.Index, 0)
		}
	}
	require.Positive(t, reclaimed)
	require.EqualValues(t, v.Stats.BlocksReclaimed, reclaimed)
	require.Equal(t, 3, v.BlocksPerSequence, "a sequence holds at most ceil(8/4)+1 blocks")
}
