package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/tokenizer"
)

// countingTokenizer records the longest text it was asked to tokenize.
type countingTokenizer struct {
	tokenizer.Tokenizer
	longest atomic.Int64
}

func (c *countingTokenizer) saw(text string) {
	for n := c.longest.Load(); int64(len(text)) > n && !c.longest.CompareAndSwap(n, int64(len(text))); n = c.longest.Load() {
	}
}

func (c *countingTokenizer) Encode(text string, addSpecial bool) []int {
	c.saw(text)
	return c.Tokenizer.Encode(text, addSpecial)
}

func (c *countingTokenizer) EncodeSpecial(text string, opt tokenizer.EncodeOptions) []int {
	c.saw(text)
	return c.Tokenizer.EncodeSpecial(text, opt)
}

// TestRequestLimits: every request limit refuses the request that goes past it, before the
// work it bounds, with an OpenAI-shaped error naming the limit's flag, and lets through
// the request that is exactly at it.
func TestRequestLimits(t *testing.T) {
	m := *loadShape(t, synth.Tiny)
	tok := &countingTokenizer{Tokenizer: m.Tokenizer}
	m.Tokenizer = tok
	lim := Limits{MaxPrompts: 3, MaxChoices: 6, MaxStops: 2, MaxStopBytes: 8, MaxStopIDs: 2, MaxSaltBytes: 8, MaxLogprobs: 3}
	ts := startModel(t, &m, engine.Config{Sequences: 8}, Options{Limits: lim})

	ok := map[string]any{"prompt": []string{"a", "b", "c"}, "n": 2, "max_tokens": 2, "stop": []string{"12345678", "x"},
		"stop_token_ids": []int{5, 6}, "cache_salt": "12345678", "logprobs": 3}
	ts.complete(t, ok)
	over := func(key string, v any) map[string]any {
		body := clone(ok)
		body[key] = v
		return body
	}
	cases := []struct {
		name, param, flag, want string
		body                    any
	}{
		{"prompts", "prompt", "--max-prompts", "a batch of more than 3 prompts, at most 3", over("prompt", []string{"a", "b", "c", "d"})},
		{"prompts as ids", "prompt", "--max-prompts", "a batch of more than 3 prompts", over("prompt", [][]int{{1}, {1}, {1}, {1}})},
		{"choices", "n", "--max-choices", "3 prompts with n = 3 ask for 9 choices, at most 6", over("n", 3)},
		{"stops", "stop", "--max-stops", "stop has 3 strings, at most 2", over("stop", []string{"a", "b", "c"})},
		{"stop length", "stop", "--max-stop-bytes", "stop[1] is 9 bytes, at most 8", over("stop", []string{"a", "123456789"})},
		{"stop ids", "stop_token_ids", "--max-stop-ids", "stop_token_ids has 3 ids, at most 2", over("stop_token_ids", []int{1, 2, 3})},
		{"salt", "cache_salt", "--max-salt-bytes", "cache_salt is 9 bytes, at most 8", over("cache_salt", "123456789")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := ts.apiError(t, "/v1/completions", c.body, http.StatusBadRequest)
			require.Equal(t, "limit_exceeded", *e.Code)
			require.Equal(t, c.param, *e.Param)
			require.Contains(t, e.Message, c.want)
			require.Contains(t, e.Message, "kvref serve "+c.flag)
		})
	}

	t.Run("logprobs", func(t *testing.T) {
		e := ts.apiError(t, "/v1/completions", over("logprobs", 4), http.StatusBadRequest)
		require.Contains(t, e.Message, "logprobs must be between 0 and 3")
	})

	t.Run("body", func(t *testing.T) {
		small := startModel(t, &m, engine.Config{}, Options{Limits: Limits{MaxBodyBytes: 2000}})
		small.complete(t, map[string]any{"prompt": "a", "max_tokens": 1, "user": strings.Repeat("u", 1900)})
		body := []byte(fmt.Sprintf(`{"prompt": "a", "user": "%s"}`, strings.Repeat("u", 2000)))
		e := small.apiError(t, "/v1/completions", body, http.StatusRequestEntityTooLarge)
		require.Equal(t, "body_too_large", *e.Code)
		require.Contains(t, e.Message, "larger than 2000 bytes (the server's limit, kvref serve --max-body)")
	})

	t.Run("text too long to tokenize", func(t *testing.T) {
		// Past 4 × the longest piece × the context, the text is refused untokenized.
		limit := ts.maxPromptBytes()
		tok.longest.Store(0)
		e := ts.apiError(t, "/v1/completions", []byte(`{"prompt": ["a", "`+strings.Repeat("b", limit+1)+`"]}`), http.StatusBadRequest)
		require.Equal(t, "context_length_exceeded", *e.Code)
		require.Contains(t, e.Message, fmt.Sprintf("prompt[1] is %d bytes of text, but no prompt that fits the context of 256 tokens is longer than %d bytes", limit+1, limit))
		require.Equal(t, int64(1), tok.longest.Load(), "only the first prompt was tokenized")
	})
	t.Run("batch stops at the first prompt too long", func(t *testing.T) {
		tok.longest.Store(0)
		long := strings.Repeat("x ", 300)
		e := ts.apiError(t, "/v1/completions", map[string]any{"prompt": []string{long, "a"}}, http.StatusBadRequest)
		require.Contains(t, e.Message, "prompt[0] has")
		require.Contains(t, e.Message, "the context holds 256")
		require.Equal(t, int64(len(long)), tok.longest.Load(), `"a" was not tokenized`)
	})
	t.Run("token ids too many", func(t *testing.T) {
		e := ts.apiError(t, "/v1/completions", map[string]any{"prompt": make([]int, 256)}, http.StatusBadRequest)
		require.Contains(t, e.Message, "prompt has 256 tokens but the context holds 256")
		e = ts.apiError(t, "/v1/completions", map[string]any{"prompt": make([]int, 100000)}, http.StatusBadRequest)
		require.Contains(t, e.Message, "prompt has more than 256 tokens but the context holds 256")
	})
	require.Zero(t, ts.stats(t).Cache.BlocksUsed)
}

// TestMaxTokensCannotOverflow: max_tokens near 2^63 used to wrap prompt + max_tokens
// negative, and the request ran to the end of the context.
func TestMaxTokensCannotOverflow(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	for _, body := range []map[string]any{
		{"prompt": "Once", "max_tokens": int64(9223372036854775807)},
		{"prompt": []int{1, 5, 6}, "max_tokens": int64(9223372036854775806)},
		{"prompt": []string{"a", "b"}, "max_tokens": int64(9223372036854775000), "stream": true},
	} {
		e := ts.apiError(t, "/v1/completions", body, http.StatusBadRequest)
		require.Equal(t, "context_length_exceeded", *e.Code)
		require.Equal(t, "max_tokens", *e.Param)
		require.Contains(t, e.Message, "exceed the context of 256; lower max_tokens to at most")
	}
	e := ts.apiError(t, "/v1/completions", []byte(`{"prompt": "a", "max_tokens": 9223372036854775808}`), http.StatusBadRequest)
	require.Contains(t, e.Message, "max_tokens must be an integer")
	require.Zero(t, ts.stats(t).Requests, "nothing reached the engine")
}

// TestQueueLimit: a request that would take the engine past MaxQueue choices gets 429 with
// Retry-After at once, and gets in once the queue has room.
func TestQueueLimit(t *testing.T) {
	ts := start(t, synth.Default, engine.Config{Sequences: 4}, Options{Limits: Limits{MaxQueue: 4, MaxChoices: 4}})
	b, err := json.Marshal(map[string]any{"prompt": "busy", "max_tokens": 2000, "ignore_eos": true, "stream": true, "n": 3})
	require.NoError(t, err)
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	r := bufio.NewReader(resp.Body)
	readEvent(t, r) // the 3 choices are in the engine

	status, out := ts.post(t, "/v1/completions", map[string]any{"prompt": "more", "max_tokens": 2, "n": 2})
	require.Equal(t, http.StatusTooManyRequests, status, string(out))
	e := decodeError(t, out)
	require.Equal(t, "queue_full", *e.Code)
	require.Contains(t, e.Message, "3 choices are in the engine and this request adds 2, over its limit of 4 (kvref serve --max-queue)")
	ts.complete(t, map[string]any{"prompt": "fits", "max_tokens": 2}) // 3 + 1 = 4

	resp.Body.Close() // the busy request is cancelled, and its choices leave the queue
	require.Eventually(t, func() bool { return ts.stats(t).Running == 0 }, 10*time.Second, 5*time.Millisecond)
	ts.complete(t, map[string]any{"prompt": "more", "max_tokens": 2, "n": 2})
	require.Zero(t, ts.stats(t).Running)
}

// rawPost opens a connection and sends the head of a POST /v1/completions with a body of
// length bytes, and the first part of that body.
func rawPost(t *testing.T, url string, length int, part string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nHost: kvref\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", length, part)
	require.NoError(t, err)
	return c
}

// TestBodyThatStopsArriving: a request body that stops arriving is answered 408 after
// ReadTimeout and its connection closed; a body that arrives in pieces within it is served.
func TestBodyThatStopsArriving(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{Limits: Limits{ReadTimeout: 300 * time.Millisecond}})
	c := rawPost(t, ts.URL, 100, `{"prompt": "a",`)
	start := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	out, _ := io.ReadAll(resp.Body)
	e := decodeError(t, out)
	require.Equal(t, "request_timeout", *e.Code)
	require.Contains(t, e.Message, "did not arrive within 300ms (kvref serve --read-timeout)")
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "the connection is closed")

	body := `{"prompt": "a", "max_tokens": 2}`
	c = rawPost(t, ts.URL, len(body), body[:5])
	time.Sleep(100 * time.Millisecond)
	_, err = io.WriteString(c, body[5:])
	require.NoError(t, err)
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp.Body.Close()
}

// TestServeTimesOutIdleAndSilentConnections: under Serve, a connection that sends no request
// head is closed after ReadTimeout, and an idle keep-alive connection after IdleTimeout;
// a connection kept busy with a stream longer than both is not cut.
func TestServeTimesOutIdleAndSilentConnections(t *testing.T) {
	m := loadShape(t, synth.Tiny)
	eng, err := engine.New(m, engine.Config{Threads: 2})
	require.NoError(t, err)
	defer eng.Close()
	srv := New(eng, Options{Limits: Limits{ReadTimeout: 200 * time.Millisecond, IdleTimeout: 300 * time.Millisecond}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() {
		stop()
		require.NoError(t, <-served)
	}()
	addr := ln.Addr().String()

	closedAfter := func(c net.Conn) time.Duration {
		start := time.Now()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, err := io.Copy(io.Discard, c)
		require.NoError(t, err, "the server closes the connection (no read deadline of ours passes)")
		return time.Since(start)
	}
	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	require.GreaterOrEqual(t, closedAfter(silent), 150*time.Millisecond)

	idle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer idle.Close()
	_, err = io.WriteString(idle, "GET /health HTTP/1.1\r\nHost: kvref\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	start := time.Now()
	require.NoError(t, idle.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = br.ReadByte()
	require.ErrorIs(t, err, io.EOF)
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)

	// A stream that lasts longer than both timeouts (its client pauses) is served to its end.
	b, err := json.Marshal(map[string]any{"prompt": "long", "max_tokens": 100, "ignore_eos": true, "stream": true})
	require.NoError(t, err)
	resp, err = http.Post("http://"+addr+"/v1/completions", "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	readEvent(t, r)
	time.Sleep(500 * time.Millisecond)
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(rest), "data: [DONE]\n\n"), "%q", tail(rest))
}

// TestRequestTimeout: a request past RequestTimeout is cancelled and answered 503
// request_timeout; a stream ends with that error event and [DONE].
func TestRequestTimeout(t *testing.T) {
	ts := start(t, synth.Default, engine.Config{}, Options{Limits: Limits{RequestTimeout: 150 * time.Millisecond}})
	long := map[string]any{"prompt": "slow", "max_tokens": 2000, "ignore_eos": true, "n": 4}
	e := ts.apiError(t, "/v1/completions", long, http.StatusServiceUnavailable)
	require.Equal(t, "request_timeout", *e.Code)
	require.Contains(t, e.Message, "past its deadline of 150ms (kvref serve --request-timeout)")

	body := clone(long)
	body["stream"] = true
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	events := sseEvents(t, out)
	require.Equal(t, "[DONE]", events[len(events)-1])
	require.Equal(t, "request_timeout", *decodeError(t, []byte(events[len(events)-2])).Code)
	require.Eventually(t, func() bool { st := ts.stats(t); return st.Running == 0 && st.Cache.BlocksUsed == 0 },
		5*time.Second, 5*time.Millisecond, "the requests were cancelled")
}

// slowReader starts a stream it does not read, on a connection whose socket buffers are
// small (the server's send buffer too, see smallBuffers), so that the server's writes block
// after a few kilobytes rather than megabytes.
func slowReader(t *testing.T, url string, body map[string]any) *net.TCPConn {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	tc := c.(*net.TCPConn)
	require.NoError(t, tc.SetReadBuffer(4096))
	t.Cleanup(func() { c.Close() })
	_, err = fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nHost: kvref\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	require.NoError(t, err)
	return tc
}

// smallBuffers is a listener whose connections have a 4 KiB send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// startSmallBuffers serves shape's model like start, on connections with small send buffers.
func startSmallBuffers(t *testing.T, shape synth.Shape, cfg engine.Config, opts Options) *testServer {
	t.Helper()
	ts := start(t, shape, cfg, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: ts.Handler()}
	go hs.Serve(smallBuffers{ln})
	t.Cleanup(func() { hs.Close() })
	ts.URL = "http://" + ln.Addr().String()
	return ts
}

// logLines collects a server's log.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// find returns the first line containing s, or "".
func (l *logLines) find(s string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

// TestStreamingClientThatStopsReading: a streaming client that reads nothing cannot make the
// server hold its tokens: past StreamBacklog tokens per choice its request is cancelled and
// its blocks freed while the stream is still blocked, and when the client reads at last,
// the stream ends with a client_too_slow error and [DONE]. With a large backlog the write
// timeout cuts such a client instead.
func TestStreamingClientThatStopsReading(t *testing.T) {
	body := map[string]any{"prompt": "flood", "max_tokens": 250, "ignore_eos": true, "stream": true, "n": 16, "logprobs": 20, "temperature": 0.8}
	t.Run("backlog", func(t *testing.T) {
		var log logLines
		ts := startSmallBuffers(t, synth.Tiny, engine.Config{Sequences: 16}, Options{Limits: Limits{StreamBacklog: 4}, Logf: log.logf, LogRequests: true})
		c := slowReader(t, ts.URL, body)
		require.Eventually(t, func() bool { st := ts.stats(t); return st.Cancelled == 1 && st.Cache.BlocksUsed == 0 },
			20*time.Second, 5*time.Millisecond, "the request is cancelled while its client reads nothing")
		require.Less(t, ts.stats(t).GeneratedTokens, int64(16*250), "it did not run to its end")
		require.NoError(t, c.SetReadBuffer(1<<20))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil) // the client reads at last
		require.NoError(t, err)
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		tail := string(out[max(0, len(out)-600):])
		require.Contains(t, tail, `"code":"client_too_slow"`)
		require.Contains(t, tail, "(4 per choice, kvref serve --stream-backlog)")
		require.Contains(t, tail, "data: [DONE]")
		require.Eventually(t, func() bool { return log.find("client_too_slow") != "" }, 5*time.Second, 5*time.Millisecond)
	})
	t.Run("write timeout", func(t *testing.T) {
		var log logLines
		ts := startSmallBuffers(t, synth.Tiny, engine.Config{Sequences: 16}, Options{Limits: Limits{StreamBacklog: 1 << 20, WriteTimeout: 200 * time.Millisecond}, Logf: log.logf, LogRequests: true})
		slowReader(t, ts.URL, body)
		require.Eventually(t, func() bool { st := ts.stats(t); return st.Cancelled == 1 && st.Cache.BlocksUsed == 0 },
			20*time.Second, 5*time.Millisecond, "the request is cancelled once a write blocks for 200 ms")
		require.Eventually(t, func() bool {
			return log.find("cut off: the client took no bytes for 200ms (kvref serve --write-timeout)") != ""
		},
			5*time.Second, 5*time.Millisecond)
	})
}

// TestLogLineOfACancelledRequest: the log line of a request whose client went away counts
// the prompt tokens and the tokens generated and streamed before it left (it used to say 0
// and 0).
func TestLogLineOfACancelledRequest(t *testing.T) {
	var log logLines
	ts := start(t, synth.Default, engine.Config{}, Options{Logf: log.logf, LogRequests: true})
	prompt := []int{1, 20, 30, 40, 50, 60}
	b, err := json.Marshal(map[string]any{"prompt": prompt, "max_tokens": 1500, "ignore_eos": true, "stream": true})
	require.NoError(t, err)
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	r := bufio.NewReader(resp.Body)
	for range 10 {
		readEvent(t, r)
	}
	resp.Body.Close()
	var line string
	require.Eventually(t, func() bool { line = log.find("cancelled by the client"); return line != "" }, 10*time.Second, 5*time.Millisecond)
	var prompted, cached, generated, streamed int
	_, err = fmt.Sscanf(line[strings.Index(line, "n=1, ")+5:], "%d prompt tokens (%d cached), %d generated, %d streamed", &prompted, &cached, &generated, &streamed)
	require.NoError(t, err, line)
	require.Equal(t, len(prompt), prompted, line)
	require.GreaterOrEqual(t, streamed, 10, line)
	require.GreaterOrEqual(t, generated, streamed, line)
	require.Less(t, generated, 1500, line)
}

// TestHealthFollowsTheEngineLoop: /health is 503 before the loop runs and while it is stuck
// in one piece of work longer than StallTimeout, and 200 again once it moves on.
func TestHealthFollowsTheEngineLoop(t *testing.T) {
	eng, err := engine.New(loadShape(t, synth.Tiny), engine.Config{Threads: 1})
	require.NoError(t, err)
	defer eng.Close()
	srv := New(eng, Options{Limits: Limits{StallTimeout: 100 * time.Millisecond}})
	ts := &testServer{Server: srv, URL: httptestServer(t, srv.Handler())}
	status, out := ts.get(t, "/health")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, string(out), "the engine loop is not running yet")

	loop := make(chan error, 1)
	go func() { loop <- srv.Run(context.Background()) }()
	defer func() {
		srv.Close()
		require.NoError(t, <-loop)
	}()
	require.Eventually(t, func() bool { status, _ := ts.get(t, "/health"); return status == http.StatusOK }, 5*time.Second, time.Millisecond)

	release := make(chan struct{})
	go srv.do(context.Background(), func() { <-release }) // the loop is stuck
	require.Eventually(t, func() bool {
		status, out = ts.get(t, "/health")
		return status == http.StatusServiceUnavailable
	}, 5*time.Second, 10*time.Millisecond)
	require.Contains(t, string(out), `"status":"stalled"`)
	require.Contains(t, string(out), "(kvref serve --stall-timeout)")
	close(release)
	require.Eventually(t, func() bool { status, _ := ts.get(t, "/health"); return status == http.StatusOK }, 5*time.Second, time.Millisecond)
}

// TestChatLimits: /v1/chat/completions is held to the same limits: its rendered conversation
// is refused before it is tokenized when no prompt that long fits the context, its
// max_tokens cannot overflow, and its stop strings are counted.
func TestChatLimits(t *testing.T) {
	m := *loadShape(t, synth.Tiny)
	tok := &countingTokenizer{Tokenizer: m.Tokenizer}
	m.Tokenizer = tok
	ts := startModel(t, &m, engine.Config{}, Options{Limits: Limits{MaxStops: 2}})
	limit := ts.maxPromptBytes()
	msgs := func(text string) []map[string]any { return []map[string]any{{"role": "user", "content": text}} }

	tok.longest.Store(0)
	e := ts.apiError(t, "/v1/chat/completions", map[string]any{"messages": msgs(strings.Repeat("x", limit))}, http.StatusBadRequest)
	require.Equal(t, "context_length_exceeded", *e.Code)
	require.Equal(t, "messages", *e.Param)
	require.Contains(t, e.Message, "the rendered conversation is")
	require.Contains(t, e.Message, fmt.Sprintf("no prompt that fits the context of 256 tokens is longer than %d bytes", limit))
	require.Zero(t, tok.longest.Load(), "nothing was tokenized")

	e = ts.apiError(t, "/v1/chat/completions", map[string]any{"messages": msgs("hi"), "max_tokens": int64(9223372036854775807)}, http.StatusBadRequest)
	require.Equal(t, "context_length_exceeded", *e.Code)
	require.Contains(t, e.Message, "exceed the context of 256")

	e = ts.apiError(t, "/v1/chat/completions", map[string]any{"messages": msgs("hi"), "stop": []string{"a", "b", "c"}}, http.StatusBadRequest)
	require.Contains(t, e.Message, "stop has 3 strings, at most 2 are allowed (the server's limit, kvref serve --max-stops)")
	require.Zero(t, ts.stats(t).Requests, "nothing reached the engine")
}
