package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
)

// replayStream is everything one /v1/cache/events?since=N stream has said.
type replayStream struct {
	mu     sync.Mutex
	hello  *cacheview.Hello
	events []cacheview.Event
	lost   cacheview.Tally
	cancel context.CancelFunc
	done   chan struct{}
}

// follow opens /v1/cache/events with query q and reads it until the test ends.
func (ts *testServer) follow(t *testing.T, q string) *replayStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/v1/cache/events"+q, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	r := &replayStream{cancel: cancel, done: make(chan struct{}), lost: cacheview.Tally{}}
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
					var h cacheview.Hello
					if json.Unmarshal(data, &h) == nil {
						r.hello = &h
					}
				case "cache":
					var e cacheview.Event
					if json.Unmarshal(data, &e) == nil {
						r.events = append(r.events, e)
					}
				case "dropped":
					var d struct{ Lost cacheview.Tally }
					json.Unmarshal(data, &d)
					for k, v := range d.Lost {
						x := r.lost[k]
						x.N += v.N
						x.Slots += v.Slots
						r.lost[k] = x
					}
				}
				r.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// upTo waits until the stream has accounted for every event numbered up to n (replayed,
// live, or counted in its hello) and returns its hello and events.
func (r *replayStream) upTo(t *testing.T, n int64) (cacheview.Hello, []cacheview.Event) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		var h cacheview.Hello
		said := r.hello != nil
		if said {
			h = *r.hello
		}
		evs := slices.Clone(r.events)
		r.mu.Unlock()
		last := h.From
		if len(evs) > 0 {
			last = evs[len(evs)-1].N
		}
		if said && last >= n {
			return h, evs
		}
		require.True(t, time.Now().Before(deadline), "the stream reached event %d of %d", last, n)
		time.Sleep(5 * time.Millisecond)
	}
}

// tallyOf is the hello's tally plus the events' own.
func tallyOf(h cacheview.Hello, evs []cacheview.Event) cacheview.Tally {
	t := cacheview.Tally{}
	for k, v := range h.Tally {
		t[k] = v
	}
	for _, e := range evs {
		x := t[e.Kind]
		x.N++
		x.Slots += int64(e.Slots)
		t[e.Kind] = x
	}
	return t
}

// TestCacheViewRemembers: a viewer that comes after a burst of requests sharing a prefix
// gets the events from the server's ring (numbered 1.. with ?since=0, none twice, then the
// live ones), and GET /v1/cache lists the finished requests: their prompt, the tokens
// reused, the blocks each sequence held, and why they ended.
func TestCacheViewRemembers(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 4, CacheBlocks: 64}, Options{})
	prefix := []int{1, 10, 11, 12, 13, 14, 15, 16, 17}
	var cached []int
	for i := range 3 {
		r := ts.complete(t, map[string]any{"prompt": append(slices.Clone(prefix), 30+i, 31+i), "max_tokens": 3, "temperature": 0})
		cached = append(cached, r.Usage.PromptTokensDetails.CachedTokens)
	}
	require.Equal(t, []int{0, 8, 8}, cached, "the second and third reuse two blocks of 4")

	v := ts.view(t)
	late := ts.follow(t, "?since=0")
	hello, evs := late.upTo(t, v.Events)
	require.Zero(t, hello.From, "the ring holds everything so far")
	require.Equal(t, v.Events, hello.Published)
	require.Equal(t, cacheview.DefaultHistory, hello.History)
	require.Empty(t, hello.Tally)
	for i, e := range evs {
		require.Equal(t, int64(i+1), e.N)
	}
	var submits, finishes, admits []cacheview.Event
	for _, e := range evs {
		switch e.Kind {
		case "submit":
			submits = append(submits, e)
		case "finish":
			finishes = append(finishes, e)
		case "admit":
			admits = append(admits, e)
		}
	}
	require.Len(t, submits, 3)
	require.Len(t, finishes, 3)
	require.Len(t, admits, 3)
	for i := range 3 {
		require.Equal(t, i+1, submits[i].Request, "the server numbers requests from 1, across idle schedulers")
		require.Equal(t, i+1, admits[i].Request)
		require.Equal(t, cached[i], admits[i].Computed)
		require.Equal(t, "length", finishes[i].Reason)
	}

	// The requests panel: newest first, each with its reused tokens and its blocks.
	require.NotNil(t, v.History)
	require.Equal(t, cacheview.DefaultRequestHistory, v.History.Requests)
	require.Len(t, v.Requests, 3)
	for i, q := range v.Requests {
		id := 3 - i
		require.Equal(t, id, q.ID)
		require.Equal(t, "finished", q.State)
		require.Equal(t, "length", q.Finish)
		require.Equal(t, 11, q.PromptTokens)
		require.Equal(t, cached[id-1], q.Reused)
		require.Len(t, q.Sequences, 1)
		// 11 prompt tokens + 3 generated, the last one never computed: 13 in the cache.
		require.Len(t, q.Sequences[0].Blocks, 4)
		require.NotEmpty(t, q.Prompt)
	}
	first, second, third := v.Requests[2].Sequences[0], v.Requests[1].Sequences[0], v.Requests[0].Sequences[0]
	require.Equal(t, first.Blocks[:2], second.Blocks[:2], "the shared prefix is the same two blocks")
	require.Equal(t, first.Blocks[:2], third.Blocks[:2])
	require.Empty(t, third.Stale)
	// The first request's own blocks after the prefix were freed, and a later request took
	// some of them: those are stale; its cached prefix blocks are not.
	for _, b := range first.Stale {
		require.NotContains(t, first.Blocks[:2], b)
	}
	// Each block's tokens are the prompt's (cached blocks keep them).
	for j, b := range first.Blocks[:2] {
		require.Equal(t, prefix[4*j:4*j+4], v.Blocks[b].Tokens, "block %d", b)
	}

	// Then live: a new request reaches the late viewer after the replay, numbered on.
	ts.complete(t, map[string]any{"prompt": prefix, "max_tokens": 1, "temperature": 0})
	v2 := ts.view(t)
	_, all := late.upTo(t, v2.Events)
	for i, e := range all {
		require.Equal(t, int64(i+1), e.N, "no event twice, none missed")
	}
	require.Equal(t, 4, v2.Requests[0].ID)

	// A viewer without ?since starts with the next event, as before; one with since=N gets
	// the events after N.
	mid := ts.follow(t, fmt.Sprintf("?since=%d", v.Events))
	h, evs := mid.upTo(t, v2.Events)
	require.Equal(t, v.Events, h.From)
	require.Len(t, evs, int(v2.Events-v.Events))
	require.Equal(t, tallyOf(hello, all[:v.Events]), h.Tally, "the hello counts what it does not replay")
	// A reconnecting EventSource sends the number of its last event: the stream goes on
	// from there, even when the URL asks for the whole ring.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/v1/cache/events?since=0", nil)
	require.NoError(t, err)
	req.Header.Set("Last-Event-ID", fmt.Sprint(v2.Events-2))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	var ids []string
	for len(ids) < 2 {
		line, err := rd.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(line, "data: ") && len(ids) == 0 && !strings.Contains(line, `"kind"`) {
			require.Contains(t, line, fmt.Sprintf(`"from":%d`, v2.Events-2), "the hello")
		}
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, strings.TrimSpace(id))
		}
	}
	require.Equal(t, []string{fmt.Sprint(v2.Events - 1), fmt.Sprint(v2.Events)}, ids)

	status, body := ts.get(t, "/v1/cache/events?since=x")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, string(body), `since must be an event number ≥ 0`)
}

// TestCacheViewCountersUnderLoad drives a load that evicts, copies on write and preempts in
// a small pool, with a viewer that opens halfway through and a ring too small for the whole
// story. The counters a page computes from its stream (the hello's tally, then every event)
// are the pool's and the scheduler's own; every live request's blocks, as the view follows
// them from the events, are its sequences' tables.
func TestCacheViewCountersUnderLoad(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 4, CacheBlocks: 40}, Options{ViewHistory: 300, ViewRequests: 5})
	body := func(i int) map[string]any {
		return map[string]any{"prompt": []int{1, 20, 21, 22, 23, 24, 25, 26, 27, 30 + i%4, 40 + i}, "max_tokens": 40,
			"n": 1 + i%3, "temperature": 0.8, "seed": i, "ignore_eos": true}
	}
	stop := make(chan struct{})
	errs := make(chan error, 100)
	var polls sync.WaitGroup
	polls.Add(1)
	go func() {
		defer polls.Done()
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
				err = requestsAgree(v)
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	var early *replayStream
	var clients sync.WaitGroup
	const n = 24
	for i := range n {
		if i == n/2 {
			// Halfway, once the ring has overflowed.
			for deadline := time.Now().Add(20 * time.Second); ts.view(t).Events <= 400; {
				require.True(t, time.Now().Before(deadline), "the first half published 400 events")
				time.Sleep(5 * time.Millisecond)
			}
			early = ts.follow(t, "?since=0")
		}
		clients.Add(1)
		go func() {
			defer clients.Done()
			if status, out := ts.post(t, "/v1/completions", body(i)); status != http.StatusOK {
				errs <- fmt.Errorf("request %d: %d %s", i, status, out)
			}
		}()
	}
	clients.Wait()
	close(stop)
	polls.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	v := ts.view(t)
	hello, evs := early.upTo(t, v.Events)
	require.Positive(t, hello.From, "the ring of 300 had lost the oldest events")
	require.Equal(t, 300, hello.History)
	got := tallyOf(hello, evs)
	require.Equal(t, v.Stats.Evictions, got["evict"].N)
	require.Equal(t, v.Stats.CowCopies, got["cow"].N)
	require.Equal(t, v.Stats.PrefixHitTokens, got["prefix_hit"].Slots)
	require.Equal(t, v.Stats.BlocksReclaimed, got["reclaim"].N)
	require.EqualValues(t, v.Engine.Preemptions, got["preempt"].N)
	require.EqualValues(t, n, got["submit"].N)
	require.EqualValues(t, n, got["finish"].N)
	require.Positive(t, got["evict"].N, "the load evicts")
	require.Positive(t, v.Engine.Preemptions, "the load preempts")
	var sum int64
	for _, k := range got {
		sum += k.N
	}
	require.Equal(t, v.Events, sum, "every event is counted once")
	require.Len(t, v.Requests, 5, "the ring keeps the last 5 finished requests")
	var finished []int
	for _, e := range evs {
		if e.Kind == "finish" {
			finished = append(finished, e.Request)
		}
	}
	slices.Reverse(finished)
	for i, q := range v.Requests {
		require.Equal(t, finished[i], q.ID, "newest first, in the order the finish events say")
		require.Equal(t, "finished", q.State)
		require.Equal(t, "length", q.Finish[:6])
	}
}

// requestsAgree holds a snapshot's requests to its sequences: a running sequence's blocks,
// followed from the events, are its table in the pool.
func requestsAgree(v cacheview.View) error {
	tables := map[int][]int{}
	for _, s := range v.Sequences {
		tables[s.ID] = s.Table
	}
	for _, q := range v.Requests {
		if q.State == "finished" {
			continue
		}
		for _, s := range q.Sequences {
			if s.State != "running" {
				continue
			}
			table, ok := tables[s.Seq]
			if !ok {
				return fmt.Errorf("request %d choice %d: seq %d is not live", q.ID, s.Choice, s.Seq)
			}
			if !slices.Equal(table, s.Blocks) {
				return fmt.Errorf("request %d choice %d (seq %d): blocks %v, table %v", q.ID, s.Choice, s.Seq, s.Blocks, table)
			}
		}
	}
	return nil
}
