package server

import (
	"context"
	"net"
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
		t.Fatal("ServeNotify did not return after its context ended")
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
