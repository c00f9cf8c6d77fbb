package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/logit"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model/synth"
)

// TestBadRequests: every malformed or unservable request gets 400 (404 for an unknown
// model) in OpenAI's error shape, with a message that says what is wrong.
func TestBadRequests(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	long := strings.Repeat("x", synth.Tiny.Context) // BOS + 256 tokens
	cases := []struct {
		name   string
		body   any
		status int
		param  string
		want   string
	}{
		{"not JSON", []byte(`{"prompt": "a",`), 400, "", "not valid JSON"},
		{"not an object", []byte(`[1, 2]`), 400, "", "must be a JSON object"},
		{"missing prompt", map[string]any{"max_tokens": 3}, 400, "prompt", "prompt is required"},
		{"prompt of wrong type", map[string]any{"prompt": 12}, 400, "prompt", "prompt is a number"},
		{"empty prompt array", map[string]any{"prompt": []int{}}, 400, "prompt", "empty array"},
		{"mixed batch", map[string]any{"prompt": []any{"a", []int{1}}}, 400, "prompt", "prompt[1] is an array"},
		{"fractional id", map[string]any{"prompt": []any{1, 2.5}}, 400, "prompt", "prompt[1] = 2.5 is not a token id"},
		{"id out of vocabulary", map[string]any{"prompt": []int{1, 300}}, 400, "prompt", "token 300 (at position 1) is outside the vocabulary: ids go from 0 to 258"},
		{"negative id", map[string]any{"prompt": [][]int{{1, 2}, {1, -1}}}, 400, "prompt", "prompt[1] token -1"},
		{"prompt too long", map[string]any{"prompt": long}, 400, "prompt", "has 257 tokens but the context holds 256"},
		{"prompt + max_tokens too long", map[string]any{"prompt": long[:200], "max_tokens": 100}, 400, "max_tokens", "exceed the context of 256; lower max_tokens to at most 55"},
		{"unknown model", map[string]any{"model": "gpt-3.5-turbo-instruct", "prompt": "a"}, 404, "model", `this server serves "synth:kvref-synthetic-tiny:seed7"`},
		{"echo with stream", map[string]any{"prompt": "a", "echo": true, "stream": true}, 400, "echo", "echo is not supported with stream"},
		{"max_tokens 0", map[string]any{"prompt": "a", "max_tokens": 0}, 400, "max_tokens", "at least 1"},
		{"max_tokens of wrong type", map[string]any{"prompt": "a", "max_tokens": "ten"}, 400, "max_tokens", "max_tokens must be an integer, got a JSON string"},
		{"negative temperature", map[string]any{"prompt": "a", "temperature": -0.5}, 400, "temperature", "temperature must be ≥ 0"},
		{"top_p 0", map[string]any{"prompt": "a", "top_p": 0}, 400, "top_p", "top_p must be in (0, 1]"},
		{"top_k -2", map[string]any{"prompt": "a", "top_k": -2}, 400, "top_k", "top_k must be"},
		{"min_p 2", map[string]any{"prompt": "a", "min_p": 2}, 400, "min_p", "min_p must be in [0, 1]"},
		{"n 0", map[string]any{"prompt": "a", "n": 0}, 400, "n", "n must be between 1 and 128"},
		{"best_of", map[string]any{"prompt": "a", "n": 1, "best_of": 3}, 400, "best_of", "best_of (3) is not supported"},
		{"logprobs too many", map[string]any{"prompt": "a", "logprobs": 21}, 400, "logprobs", "between 0 and 20"},
		{"logprobs as bool", map[string]any{"prompt": "a", "logprobs": true}, 400, "logprobs", "logprobs must be an integer"},
		{"seed not an integer", map[string]any{"prompt": "a", "seed": 1.5}, 400, "seed", "seed must be an integer"},
		{"seed as a string", map[string]any{"prompt": "a", "seed": "42"}, 400, "seed", `seed must be an integer (a signed or unsigned 64-bit one), got "42"`},
		{"stop of wrong type", map[string]any{"prompt": "a", "stop": 3}, 400, "stop", "stop must be a string or an array of strings"},
		{"stop token out of vocabulary", map[string]any{"prompt": "a", "stop_token_ids": []int{999}}, 400, "stop_token_ids", "outside the vocabulary"},
		{"stream_options without stream", map[string]any{"prompt": "a", "stream_options": map[string]any{"include_usage": true}}, 400, "stream_options", "only allowed when stream is true"},
		{"penalty", map[string]any{"prompt": "a", "presence_penalty": 0.5}, 400, "presence_penalty", "no penalties"},
		{"logit_bias", map[string]any{"prompt": "a", "logit_bias": map[string]float64{"5": 1}}, 400, "logit_bias", "not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := ts.apiError(t, "/v1/completions", c.body, c.status)
			require.Contains(t, e.Message, c.want)
			require.Equal(t, invalidRequest, e.Type)
			if c.param != "" {
				require.NotNil(t, e.Param)
				require.Equal(t, c.param, *e.Param)
			}
		})
	}
	// Neutral values of unsupported fields are fine (unknown fields are not: strict_test.go).
	ts.complete(t, map[string]any{"prompt": "a", "max_tokens": 2, "echo": false, "presence_penalty": 0, "best_of": 1, "user": "me"})
	require.Zero(t, ts.stats(t).Cache.BlocksUsed)
}

// TestCacheTooSmall: a continuation the whole cache cannot hold is refused up front, and the
// engine's own rejection (engine.ErrRejected) is a 400 too.
func TestCacheTooSmall(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 16, CacheBlocks: 2}, Options{})
	prompt := make([]int, 32)
	for i := range prompt {
		prompt[i] = 3 + i
	}
	e := ts.apiError(t, "/v1/completions", map[string]any{"prompt": prompt[:20], "max_tokens": 20}, 400)
	require.Equal(t, "cache_too_small", *e.Code)
	require.Contains(t, e.Message, "need 3 blocks of 16 tokens, the cache has 2")

	// 32 prompt tokens + 1 fit two blocks, but the engine wants room for the first
	// generated token too.
	e = ts.apiError(t, "/v1/completions", map[string]any{"prompt": prompt, "max_tokens": 1}, 400)
	require.Equal(t, "request_rejected", *e.Code)
	require.Equal(t, "prompt", *e.Param)
	require.Contains(t, e.Message, "the cache is too small: the prompt alone needs 3 blocks of 16 tokens, the pool has 2")
	require.Contains(t, e.Message, "; shorten the prompt, or restart the server with more --cache-blocks")

	ts.complete(t, map[string]any{"prompt": prompt[:20], "max_tokens": 8})
}

func TestMethodsAndPaths(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	status, out := ts.get(t, "/v1/completions")
	require.Equal(t, http.StatusMethodNotAllowed, status)
	require.Contains(t, decodeError(t, out).Message, "use POST")
	resp, err := http.Get(ts.URL + "/v1/completions")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "POST", resp.Header.Get("Allow"))
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))

	e := ts.apiError(t, "/v1/models", map[string]any{}, http.StatusMethodNotAllowed)
	require.Contains(t, e.Message, "use GET")

	status, out = ts.get(t, "/v2/whatever")
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, decodeError(t, out).Message, "no such endpoint")

	e = ts.apiError(t, "/v1/chat/completions", map[string]any{"messages": []any{}}, http.StatusBadRequest)
	require.Contains(t, e.Message, "messages: is empty")
	status, out = ts.get(t, "/v1/chat/completions")
	require.Equal(t, http.StatusMethodNotAllowed, status)
	require.Contains(t, decodeError(t, out).Message, "use POST")
}

func TestHealthAndMetrics(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 16}, Options{})
	status, out := ts.get(t, "/health")
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, `{"status":"ok"}`, string(out))

	ts.complete(t, map[string]any{"prompt": "metrics", "max_tokens": 5, "ignore_eos": true})
	status, out = ts.get(t, "/metrics")
	require.Equal(t, http.StatusOK, status)
	text := string(out)
	for _, line := range []string{
		"# TYPE kvref_requests_total counter", "kvref_requests_total 1\n", "kvref_requests_finished_total 1\n",
		"kvref_generated_tokens_total 5\n", "kvref_cache_blocks_used 0\n", "kvref_cache_block_size 16\n",
		"kvref_cache_bytes_per_token 256\n", // 2 · 2 layers · 2 KV heads · head_dim 8 · 4 bytes
	} {
		require.Contains(t, text, line)
	}
	require.Regexp(t, `kvref_scheduler_steps_total [1-9]`, text)
}

// TestLifecycle: Run once, Close idempotent, 503 after Close, Run after Close refused.
func TestLifecycle(t *testing.T) {
	m := loadShape(t, synth.Tiny)
	eng, err := engine.New(m, engine.Config{Threads: 1})
	require.NoError(t, err)
	defer eng.Close()

	srv := New(eng, Options{})
	loop := make(chan error, 1)
	go func() { loop <- srv.Run(context.Background()) }()
	require.Eventually(t, func() bool { // the first Run has taken the loop
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return srv.started
	}, 5*time.Second, time.Millisecond)
	require.ErrorIs(t, srv.Run(context.Background()), errRunning)
	require.NoError(t, srv.Close())
	require.NoError(t, <-loop)
	require.NoError(t, srv.Close())
	require.ErrorIs(t, srv.Run(context.Background()), ErrClosed)

	ts := &testServer{Server: srv}
	hs := httptestServer(t, srv.Handler())
	ts.URL = hs
	e := ts.apiError(t, "/v1/completions", map[string]any{"prompt": "late"}, http.StatusServiceUnavailable)
	require.Equal(t, "shutting_down", *e.Code)
	status, _ := ts.get(t, "/health")
	require.Equal(t, http.StatusServiceUnavailable, status)
	st, err := srv.Stats(context.Background())
	require.NoError(t, err)
	require.Zero(t, st.Running)

	// A context ends Run too.
	srv2 := New(eng, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { loop <- srv2.Run(ctx) }()
	cancel()
	require.ErrorIs(t, <-loop, context.Canceled)
	srv2.Close()
}

// httptestServer serves h on 127.0.0.1 until the test ends and returns its URL.
func httptestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

// TestServeShutsDownGracefully: when Serve's context ends, a request in flight still runs to
// its end, new connections are refused, and Serve returns nil; with a short timeout the
// requests still running are ended with an error event and [DONE], and the log says so
// (it used to cut the streams off mid-event and blame the client).
func TestServeShutsDownGracefully(t *testing.T) {
	m := loadShape(t, synth.Default)
	eng, err := engine.New(m, engine.Config{Threads: 2})
	require.NoError(t, err)
	defer eng.Close()

	for _, graceful := range []bool{true, false} {
		var log logLines
		opts := Options{ShutdownTimeout: time.Minute, Logf: log.logf, LogRequests: true}
		tokens := 200
		if !graceful {
			opts.ShutdownTimeout = time.Millisecond
			tokens = 2000
			// Room for every token: the client reads nothing between its first event and
			// the shutdown, and a loaded machine (the whole suite in parallel) could let
			// the default backlog fill first, ending the stream with client_too_slow.
			opts.Limits.StreamBacklog = 2 * tokens
		}
		srv := New(eng, opts)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		url := "http://" + ln.Addr().String()
		ctx, stop := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ctx, ln) }()

		b, _ := json.Marshal(map[string]any{"prompt": "shutdown", "max_tokens": tokens, "ignore_eos": true, "stream": true})
		resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		r := bufio.NewReader(resp.Body)
		readEvent(t, r)
		stop()
		var rest bytes.Buffer
		_, _ = rest.ReadFrom(r) // the server finishes the stream, or cuts it off
		resp.Body.Close()
		if graceful {
			require.True(t, strings.HasSuffix(rest.String(), "data: [DONE]\n\n"), "the request in flight must finish: %q", tail(rest.Bytes()))
			require.Equal(t, tokens-1, strings.Count(rest.String(), `"text_completion"`))
		} else {
			require.False(t, strings.Contains(rest.String(), `"finish_reason":"length"`), "the request must have been cut off")
			events := sseEvents(t, rest.Bytes())
			require.Equal(t, "[DONE]", events[len(events)-1])
			e := decodeError(t, []byte(events[len(events)-2]))
			require.Equal(t, "shutting_down", *e.Code)
			require.NotEmpty(t, log.find("still running after 1ms: ending them with a 503 error"))
			require.NotEmpty(t, log.find("POST /v1/completions 200 (shutting_down)"))
			require.Empty(t, log.find("cancelled by the client"))
		}
		select {
		case err := <-served:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			require.FailNow(t, "Serve did not return after its context ended")
		}
		_, err = http.Get(url + "/health")
		require.Error(t, err, "the listener must be closed")
		require.Zero(t, eng.Pool().Stats().BlocksUsed, "every request's blocks are freed")
	}
}

func TestCharCounter(t *testing.T) {
	offsets := func(pieces []string, final bool) []int {
		var c charCounter
		var text []byte
		var starts []int
		for _, p := range pieces {
			starts = append(starts, len(text))
			text = append(text, p...)
		}
		var out []int
		for _, s := range starts {
			out = append(out, c.at(text, s, final))
		}
		return out
	}
	require.Equal(t, []int{0, 1, 3}, offsets([]string{"a", "bc", "d"}, false))
	require.Equal(t, []int{0, 3, 3, 4}, offsets([]string{"caf", "\xc3", "\xa9", "!"}, false), "inside é: its index")
	require.Equal(t, []int{0, 1, 1, 1, 2}, offsets([]string{"x", "\xe2", "\x82", "\xac", "y"}, false), "inside €")
	require.Equal(t, []int{0, 1, 2, 3}, offsets([]string{"x", "\xe2", "\x82", "a"}, false), "broken €: one U+FFFD per byte")
	require.Equal(t, []int{0, 1, 2}, offsets([]string{"a", "\xff", "b"}, false))
	require.Equal(t, []int{0, 1, 2}, offsets([]string{"€", "\xf0", "\x9f"}, true), "unfinished at the end: byte by byte")
	require.Equal(t, []int{0, 1, 1}, offsets([]string{"€", "\xf0", "\x9f"}, false), "unfinished, not final: not known yet")
}

func TestTopIDs(t *testing.T) {
	logits := []float32{0.5, 2, -1, 2, 0.5, 3}
	require.Equal(t, []int{5, 1, 3}, logit.TopK(logits, 3), "ties go to the lower id")
	require.Equal(t, []int{5, 1, 3, 0, 4, 2}, logit.TopK(logits, 10))
	require.Empty(t, logit.TopK(logits, 0))
	require.InDelta(t, math.Log(2), logit.LogSumExp([]float32{0, 0}), 1e-15)
	require.InDelta(t, 3+math.Log(1+math.Exp(-1)), logit.LogSumExp([]float32{3, 2}), 1e-15)
}

func TestLogprobsJSON(t *testing.T) {
	top := TopLogprobs{{"b", -0.1}, {"a", -2}, {"\xff", -3}, {"\xfe", -4}}
	b, err := json.Marshal(top)
	require.NoError(t, err)
	require.Equal(t, `{"b":-0.1,"a":-2,"\ufffd":-3}`, string(b), "in order, a repeated key once")
	var back TopLogprobs
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, TopLogprobs{{"b", -0.1}, {"a", -2}, {"\ufffd", -3}}, back)

	ids := []IDLogprob{{7, -0.25}, {3, -1.5}}
	b, err = json.Marshal(ids)
	require.NoError(t, err)
	require.Equal(t, `[[7,-0.25],[3,-1.5]]`, string(b))
	var idsBack []IDLogprob
	require.NoError(t, json.Unmarshal(b, &idsBack))
	require.Equal(t, ids, idsBack)
	require.Error(t, json.Unmarshal([]byte(`[[1]]`), &idsBack))
}

func TestEngineErrorMapping(t *testing.T) {
	require.Equal(t, 400, engineError(errors.Join(engine.ErrRejected)).Status)
	// The engine's typed rejections name the request field that set the limit.
	e := engineError(&engine.ContextExceededError{Prompt: 4, MaxTokens: 100, Context: 64})
	require.Equal(t, 400, e.Status)
	require.Equal(t, "max_tokens", *e.Param)
	require.Equal(t, "request_rejected", *e.Code)
	require.Contains(t, e.Message, "exceed the context of 64; at most 60 new tokens fit; lower max_tokens")
	e = engineError(&engine.PromptTooLongError{Prompt: 70, Context: 64})
	require.Equal(t, "prompt", *e.Param)
	require.Contains(t, e.Message, "the prompt has 70 tokens but the context holds 64")
	e = engineError(fmt.Errorf("%w: sequence 3 needs 2 more blocks", kvcache.ErrOutOfBlocks))
	require.Equal(t, 400, e.Status)
	require.Equal(t, "cache_too_small", *e.Code)
	require.Contains(t, e.Message, "restart the server with more --cache-blocks")
	require.Equal(t, 503, engineError(ErrClosed).Status)
	e = engineError(errors.New("boom"))
	require.Equal(t, 500, e.Status)
	require.Equal(t, serverError, e.Type)
}

func TestParseSeed(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "42": 42, "-1": math.MaxUint64, "18446744073709551615": math.MaxUint64} {
		got, err := parseSeed(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"1.5", `"7"`, "18446744073709551616", "true"} {
		_, err := parseSeed(in)
		require.Error(t, err, in)
	}
}
