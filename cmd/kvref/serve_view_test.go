package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/cacheview"
)

// TestServeViewHistoryFlags: --view-history and --view-requests size what the cache view
// keeps for pages that open later (0: nothing), and refuse a negative size.
func TestServeViewHistoryFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--view-history", "-1"}, "--view-history must be ≥ 0, got -1"},
		{[]string{"--view-requests", "-3"}, "--view-requests must be ≥ 0, got -3"},
	} {
		_, stderr, code := kvref(t, append([]string{"serve"}, c.args...)...)
		require.Equal(t, 1, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.want)
	}

	view := func(url string) cacheview.View {
		resp, err := http.Get(url + "/cache")
		require.NoError(t, err)
		defer resp.Body.Close()
		var v cacheview.View
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
		return v
	}
	for _, c := range []struct {
		args             []string
		events, requests int
	}{
		{nil, cacheview.DefaultHistory, cacheview.DefaultRequestHistory},
		{[]string{"--view-history", "10", "--view-requests", "0"}, 10, 0},
	} {
		ctx, stop := context.WithCancel(context.Background())
		var errb syncBuffer
		exited := make(chan error, 1)
		go func() {
			exited <- serve(ctx, func() {}, append([]string{"--port", "0", "-c", "64", "-t", "1", "--quiet"}, c.args...), io.Discard, &errb)
		}()
		url := waitListening(t, &errb, exited)
		postJSON(t, url+"/completions", map[string]any{"prompt": "Once upon a time", "max_tokens": 2})
		v := view(url)
		require.Equal(t, &cacheview.History{Events: c.events, Requests: c.requests}, v.History, "%v", c.args)
		require.Len(t, v.Requests, min(c.requests, 1), "%v", c.args)
		stop()
		select {
		case err := <-exited:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			require.FailNow(t, "kvref serve did not stop")
		}
	}
}
