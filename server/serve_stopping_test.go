package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
)

// TestServeNotify: stopping runs once when the context ends, and has returned by the time
// Serve does; when Serve ends on its own (its listener fails), stopping is not called and
// the error is returned.
func TestServeNotify(t *testing.T) {
	eng, err := engine.New(loadShape(t, synth.Default), engine.Config{Threads: 1})
	require.NoError(t, err)
	defer eng.Close()

	var calls atomic.Int32
	stopping := func() { time.Sleep(50 * time.Millisecond); calls.Add(1) }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- New(eng, Options{ShutdownTimeout: time.Second}).ServeNotify(ctx, ln, stopping) }()
	stop()
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "ServeNotify did not return after its context ended")
	}
	require.EqualValues(t, 1, calls.Load(), "stopping ran once, before ServeNotify returned")

	calls.Store(0)
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	err = New(eng, Options{ShutdownTimeout: time.Second}).ServeNotify(context.Background(), ln, stopping)
	require.Error(t, err, "a closed listener makes Serve fail")
	require.Zero(t, calls.Load(), "stopping is not called when Serve fails on its own")
}

// TestHealthIsUnavailableWhileDraining: once Serve's context ends and while a request is
// still running, the server keeps listening: /health answers 503 "shutting down" and a new
// completion 503 shutting_down, as docs/serve.md says (connections used to be refused at
// once); then the listener closes.
func TestHealthIsUnavailableWhileDraining(t *testing.T) {
	m := loadShape(t, synth.Tiny)
	eng, err := engine.New(m, engine.Config{Threads: 1, Sequences: 16})
	require.NoError(t, err)
	defer eng.Close()
	srv := New(eng, Options{ShutdownTimeout: 3 * time.Second})
	ln := smallBuffers{mustListen(t)}
	url := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	// A stream whose client reads nothing keeps its handler running.
	slowReader(t, url, map[string]any{"prompt": "drain", "max_tokens": 250, "ignore_eos": true, "stream": true, "n": 16, "logprobs": 20})
	require.Eventually(t, func() bool { return srv.inflight.Load() > 0 }, 10*time.Second, time.Millisecond)
	stop()
	require.Eventually(t, func() bool { return srv.draining.Load() }, 10*time.Second, time.Millisecond)
	resp, err := http.Get(url + "/health")
	require.NoError(t, err, "the server still listens while draining")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Contains(t, string(body), "shutting down")
	resp, err = http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt": "late"}`))
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Contains(t, string(body), "shutting_down")
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "Serve did not return")
	}
	_, err = http.Get(url + "/health")
	require.Error(t, err, "then the listener is closed")
}

func mustListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln
}
