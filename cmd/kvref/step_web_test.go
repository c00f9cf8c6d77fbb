package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/cacheview"
)

// TestPlanEndpointAgreesWithPlanCommand: the "price it" panel's numbers are kvref plan's,
// for the design sketch's worked example, a preset and a scaled cache type (the endpoint
// and the command name the memory and weights sources in their own words).
func TestPlanEndpointAgreesWithPlanCommand(t *testing.T) {
	for _, c := range []struct {
		args  []string
		query url.Values
	}{
		{workedExampleArgs[1:], url.Values{"layers": {"32"}, "kv_heads": {"8"}, "head_dim": {"128"}, "heads": {"32"},
			"cache_dtype": {"f16"}, "ctx": {"4096"}, "mem": {"80GB"}, "weights": {"14GB"}}},
		{[]string{"--preset", "llama-3-8b", "--mem", "24GiB", "--cache-dtype", "q8_0"},
			url.Values{"preset": {"llama-3-8b"}, "mem": {"24GiB"}, "cache_dtype": {"q8_0"}}},
		{[]string{"--preset", "mistral-7b", "--mem", "40GB", "--weights-dtype", "q4_k", "--ctx", "32768", "--block-size", "32"},
			url.Values{"preset": {"mistral-7b"}, "mem": {"40GB"}, "weights_dtype": {"q4_k"}, "ctx": {"32768"}, "block_size": {"32"}}},
	} {
		want := planJSONOf(t, c.args...)
		ans, err := cacheview.Planner{}.Answer(c.query)
		require.NoError(t, err, c.query.Encode())
		got := ans.Plan
		got.MemoryFrom, got.WeightsFrom = want.MemoryFrom, want.WeightsFrom
		if c.args[0] != "--preset" {
			got.Model.Name, got.Model.From = want.Model.Name, want.Model.From
		}
		require.Equal(t, want, got, c.query.Encode())
		// The curve at the planned context is the plan of every cache type.
		for i, n := range ans.Curve.Contexts {
			if n != want.Context {
				continue
			}
			for j, ct := range ans.Curve.Types {
				if ct.Error == "" {
					require.Equal(t, want.CacheTypes[j].MaxSequences, ct.MaxSequences[i], ct.CacheType)
				}
			}
		}
	}
	_, err := cacheview.Planner{}.Answer(url.Values{"preset": {"nope"}})
	require.ErrorContains(t, err, "llama-3-8b", "an unknown preset lists the known ones")
}

// TestStepWebServesTheSession: kvref step --web serves the page and the session's
// endpoints; the prompt of -p is sequence 0.
func TestStepWebServesTheSession(t *testing.T) {
	o, err := parseStepFlags([]string{"--web", "--port", "0", "-p", "Once upon a time", "--block-size", "4", "--cache-blocks", "8", "-t", "1"}, io.Discard)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- stepWeb(ctx, o, io.Discard, func(u string) { urls <- u }) }()
	var base string
	select {
	case base = <-urls:
	case err := <-done:
		require.FailNow(t, fmt.Sprint(err))
	}
	resp, err := http.Get(base + "v1/cache")
	require.NoError(t, err)
	var v cacheview.View
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	resp.Body.Close()
	require.Equal(t, "step", v.Mode)
	require.Len(t, v.Sequences, 1)
	require.Equal(t, 5, v.Sequences[0].Len)
	require.Equal(t, 8, v.BlocksTotal)
	resp, err = http.Post(base+"v1/step", "application/json", strings.NewReader(`{"op":"decode","seq":0,"n":3}`))
	require.NoError(t, err)
	var rec cacheview.StepRecord
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&rec))
	resp.Body.Close()
	require.Len(t, rec.Decoded, 3)
	cancel()
	require.NoError(t, <-done)

	for _, bad := range [][]string{{"--web", "--port", "70000"}, {"--web", "--script", "x.txt"}} {
		_, err := parseStepFlags(bad, io.Discard)
		require.Error(t, err, bad)
	}
}
