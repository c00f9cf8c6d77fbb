package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
)

// models caches the synthetic models by name: they are read-only and shared by engines.
var models sync.Map

func loadShape(t *testing.T, shape synth.Shape) *model.Model {
	t.Helper()
	if m, ok := models.Load(shape.Name); ok {
		return m.(*model.Model)
	}
	m, err := shape.Model()
	require.NoError(t, err)
	actual, _ := models.LoadOrStore(shape.Name, m)
	return actual.(*model.Model)
}

// testServer is a Server with its engine loop running behind an httptest server on
// 127.0.0.1.
type testServer struct {
	*Server
	URL   string
	model *model.Model
}

// start serves shape's model with an engine configured by cfg (2 threads unless set).
func start(t *testing.T, shape synth.Shape, cfg engine.Config, opts Options) *testServer {
	t.Helper()
	return startModel(t, loadShape(t, shape), cfg, opts)
}

// startModel serves m.
func startModel(t *testing.T, m *model.Model, cfg engine.Config, opts Options) *testServer {
	t.Helper()
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	eng, err := engine.New(m, cfg)
	require.NoError(t, err)
	srv := New(eng, opts)
	loop := make(chan error, 1)
	go func() { loop <- srv.Run(context.Background()) }()
	// Until Run has begun, /health says "starting" (503) and a Close makes Run return
	// ErrClosed: a test that asks at once would race the goroutine (it lost under -race on
	// a loaded machine).
	require.Eventually(t, func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return srv.started
	}, 10*time.Second, time.Millisecond, "the engine loop did not start")
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.NoError(t, <-loop)
		ts.Close()
		eng.Close()
	})
	return &testServer{Server: srv, URL: ts.URL, model: m}
}

// post sends body (a JSON value, or raw bytes) and returns the status and response body.
func (ts *testServer) post(t *testing.T, path string, body any) (int, []byte) {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		var err error
		b, err = json.Marshal(body)
		require.NoError(t, err)
	}
	resp, err := http.Post(ts.URL+path, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// get fetches path.
func (ts *testServer) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(ts.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// complete posts a completion request that must succeed.
func (ts *testServer) complete(t *testing.T, body map[string]any) CompletionResponse {
	t.Helper()
	status, out := ts.post(t, "/v1/completions", body)
	require.Equal(t, http.StatusOK, status, string(out))
	var resp CompletionResponse
	require.NoError(t, json.Unmarshal(out, &resp), string(out))
	require.Equal(t, "text_completion", resp.Object)
	require.NotNil(t, resp.Usage)
	return resp
}

// apiError posts a request that must fail with status and returns the error.
func (ts *testServer) apiError(t *testing.T, path string, body any, status int) APIError {
	t.Helper()
	got, out := ts.post(t, path, body)
	require.Equal(t, status, got, string(out))
	return decodeError(t, out)
}

func decodeError(t *testing.T, out []byte) APIError {
	t.Helper()
	var e ErrorResponse
	require.NoError(t, json.Unmarshal(out, &e), string(out))
	require.NotEmpty(t, e.Error.Message)
	require.NotEmpty(t, e.Error.Type)
	return e.Error
}

// stats reads the server's counters.
func (ts *testServer) stats(t *testing.T) Stats {
	t.Helper()
	st, err := ts.Stats(context.Background())
	require.NoError(t, err)
	return st
}

// sseEvents splits a text/event-stream body into its data payloads.
func sseEvents(t *testing.T, body []byte) []string {
	t.Helper()
	require.True(t, bytes.HasSuffix(body, []byte("\n\n")), "the stream must end with a blank line: %q", tail(body))
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		require.True(t, strings.HasPrefix(ev, "data: "), "event %q", ev)
		require.NotContains(t, ev, "\n", "one data line per event")
		out = append(out, strings.TrimPrefix(ev, "data: "))
	}
	return out
}

func tail(b []byte) []byte { return b[max(0, len(b)-80):] }

// readEvent reads one SSE event ("data: ...\n\n") from r.
func readEvent(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	blank, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "\n", blank)
	require.True(t, strings.HasPrefix(line, "data: "), line)
	return strings.TrimSuffix(strings.TrimPrefix(line, "data: "), "\n")
}

// viaJSON is s as a client sees it after JSON: invalid UTF-8 bytes become U+FFFD.
func viaJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var out string
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// refLogprobs is the test's own log-softmax of logits in float64, for comparison.
func refLogprobs(logits []float32) []float64 {
	m := math.Inf(-1)
	for _, l := range logits {
		m = math.Max(m, float64(l))
	}
	sum := 0.0
	for _, l := range logits {
		sum += math.Exp(float64(l) - m)
	}
	lse := m + math.Log(sum)
	out := make([]float64, len(logits))
	for i, l := range logits {
		out[i] = float64(l) - lse
	}
	return out
}

// generate runs req on a fresh engine of the same model, as kvref run would, and returns
// the result and the tokens.
func generate(t *testing.T, m *model.Model, cfg engine.Config, req engine.Request) (engine.Result, []engine.Token) {
	t.Helper()
	eng, err := engine.New(m, cfg)
	require.NoError(t, err)
	defer eng.Close()
	var toks []engine.Token
	res, err := eng.Generate(req, func(tok engine.Token) error {
		toks = append(toks, tok)
		return nil
	})
	require.NoError(t, err)
	return res, toks
}
