package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/server"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines and the test's polling.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`kvref serve: listening on (http://127\.0\.0\.1:\d+/v1)\n`)

// waitListening polls stderr until the server prints its URL (or exits, or 30 s pass).
func waitListening(t *testing.T, stderr *syncBuffer, exited <-chan error) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-exited:
			require.FailNow(t, fmt.Sprintf("kvref serve exited before listening: %v\n%s", err, stderr.String()))
		case <-time.After(5 * time.Millisecond):
		}
	}
	require.FailNow(t, fmt.Sprintf("kvref serve did not print its URL:\n%s", stderr.String()))
	return ""
}

func postJSON(t *testing.T, url string, body any) []byte {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
	return out
}

// TestServeMatchesRun starts `kvref serve --port 0` in-process, checks /v1/models, requires
// a greedy completion to give exactly the ids of `kvref run --temp 0 --json` with the same
// cache flags, and stops the server through its context.
func TestServeMatchesRun(t *testing.T) {
	const prompt, n = "Once upon a time", 20
	out, stderr, code := kvref(t, "run", "-p", prompt, "-n", fmt.Sprint(n), "--temp", "0", "--ignore-eos", "--json", "--block-size", "4", "-c", "256", "-t", "2")
	require.Equal(t, 0, code, stderr)
	var want []int
	for _, tok := range parseJSONRun(t, out).Tokens {
		want = append(want, tok.ID)
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var errb syncBuffer
	exited := make(chan error, 1)
	go func() {
		exited <- serve(ctx, func() {}, []string{"--port", "0", "--block-size", "4", "-c", "256", "-t", "2", "--cache-blocks", "300"}, io.Discard, &errb)
	}()
	url := waitListening(t, &errb, exited)
	require.Contains(t, errb.String(), "KV cache f32/f32: 300 blocks of 4 tokens")

	resp, err := http.Get(url + "/models")
	require.NoError(t, err)
	var models server.ModelList
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&models))
	resp.Body.Close()
	require.Equal(t, "stories260K", models.Data[0].ID)
	require.Equal(t, 256, models.Data[0].MaxModelLen)

	var got server.CompletionResponse
	require.NoError(t, json.Unmarshal(postJSON(t, url+"/completions", map[string]any{
		"model": "stories260K", "prompt": prompt, "max_tokens": n, "temperature": 0, "ignore_eos": true, "logprobs": 1,
	}), &got))
	require.Equal(t, want, got.Choices[0].Logprobs.TokenIDs)
	require.Contains(t, errb.String(), "POST /v1/completions 200")

	stop()
	select {
	case err := <-exited:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "kvref serve did not stop")
	}
	require.Contains(t, errb.String(), "kvref serve: stopped")
	_, err = http.Get(url + "/models")
	require.Error(t, err, "the port must be closed")
}

// TestServeStopsOnSIGINT runs the real command through Main and interrupts it as Ctrl-C
// would.
func TestServeStopsOnSIGINT(t *testing.T) {
	self, err := os.FindProcess(os.Getpid())
	require.NoError(t, err)
	var errb syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- Main([]string{"serve", "--port", "0", "-c", "64", "-t", "1", "--quiet"}, io.Discard, &errb)
	}()
	url := waitListening(t, &errb, nil)
	postJSON(t, url+"/completions", map[string]any{"prompt": "hi", "max_tokens": 2})
	if err := self.Signal(os.Interrupt); err != nil {
		t.Skipf("cannot interrupt this process here: %v", err)
	}
	select {
	case code := <-exited:
		require.Equal(t, 0, code, errb.String())
	case <-time.After(30 * time.Second):
		require.FailNow(t, "kvref serve did not stop on SIGINT")
	}
	log := errb.String()
	require.Contains(t, log, "stopping: no new requests")
	require.Contains(t, log, "kvref serve: stopped")
	require.NotContains(t, log, "POST /v1/completions", "--quiet logs no requests")
}

func TestServeFlags(t *testing.T) {
	_, stderr, code := kvref(t, "serve", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, stderr, "usage: kvref serve")
	require.Contains(t, stderr, "POST /v1/completions")
	for _, flag := range []string{"-max-body", "-max-prompts", "-max-choices", "-max-queue", "-max-stops", "-max-stop-bytes", "-max-stop-ids",
		"-max-salt-bytes", "-stream-backlog", "-read-timeout", "-write-timeout", "-idle-timeout", "-request-timeout", "-stall-timeout"} {
		require.Contains(t, stderr, flag)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--block-size", "0"}, "--block-size must be ≥ 1"},
		{[]string{"--port", "70000"}, "--port must be between 0 and 65535"},
		{[]string{"--sequences", "0"}, "--sequences must be ≥ 1"},
		{[]string{"--cache-dtype", "f7"}, "f7"},
		{[]string{"--max-queue", "0"}, "--max-queue must be ≥ 1, got 0"},
		{[]string{"--max-choices", "10"}, "--max-choices (10) must be at least --max-prompts (64)"},
		{[]string{"--max-queue", "100"}, "--max-queue (100) must be at least --max-choices (256)"},
		{[]string{"--read-timeout", "0s"}, "--read-timeout must be positive"},
		{[]string{"--max-body", "0"}, "--max-body must be at least 1 byte"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-m", "/nonexistent/model.gguf", "--port", "0"}, "/nonexistent/model.gguf"},
	} {
		_, stderr, code := kvref(t, append([]string{"serve"}, c.args...)...)
		require.Equal(t, 1, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.want)
		require.True(t, strings.HasPrefix(stderr, "kvref serve: "), stderr)
	}
	_, _, code = kvref(t, "serve", "--no-such-flag")
	require.Equal(t, 2, code)
}
