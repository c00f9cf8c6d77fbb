package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/eval"
	"github.com/kvref/kvref/server"
)

// TestEvalMatchesServePromptLogprobs: `kvref eval --per-token` and kvref serve's echo +
// logprobs + max_tokens 0 and prompt_logprobs give the same log-probabilities, bit for
// bit, for the same text, whether serve's prompt missed the prefix cache or hit it (the
// same text again; partial hits: server's TestEchoPromptLogprobs).
func TestEvalMatchesServePromptLogprobs(t *testing.T) {
	const text = "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun."
	dir := t.TempDir()
	out, stderr, code := kvref(t, "eval", "--per-token", "--json", "--file", writeFile(t, dir, "text.txt", text), "-t", "2")
	require.Equal(t, 0, code, stderr)
	var ev struct {
		Tokens []eval.TokenLogprob `json:"tokens"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ev))
	require.Greater(t, len(ev.Tokens), 16)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var errb syncBuffer
	exited := make(chan error, 1)
	go func() {
		exited <- serve(ctx, func() {}, []string{"--port", "0", "--block-size", "4", "-c", "256", "-t", "2", "--quiet"}, io.Discard, &errb)
	}()
	url := waitListening(t, &errb, exited)

	for _, round := range []string{"miss", "full hit"} {
		var echo server.CompletionResponse
		require.NoError(t, json.Unmarshal(postJSON(t, url+"/completions", map[string]any{"prompt": text, "echo": true, "logprobs": 5, "max_tokens": 0}), &echo))
		lp := echo.Choices[0].Logprobs
		require.Equal(t, text, echo.Choices[0].Text)
		require.Len(t, lp.TokenLogprobs, len(ev.Tokens)+1, round)
		require.True(t, math.IsNaN(lp.TokenLogprobs[0]))
		for i, e := range ev.Tokens {
			require.Equal(t, e.ID, lp.TokenIDs[i+1], round)
			require.Equal(t, math.Float64bits(e.Logprob), math.Float64bits(lp.TokenLogprobs[i+1]), "%s: token %d", round, e.Pos)
		}
		if round == "full hit" {
			require.Equal(t, len(ev.Tokens)/4*4, echo.Usage.PromptTokensDetails.CachedTokens)
		}

		var pl server.CompletionResponse
		require.NoError(t, json.Unmarshal(postJSON(t, url+"/completions", map[string]any{"prompt": text, "prompt_logprobs": 0, "max_tokens": 0}), &pl))
		for i, e := range ev.Tokens {
			got := pl.Choices[0].PromptLogprobs[i+1][0]
			require.Equal(t, e.ID, got.ID)
			require.Equal(t, math.Float64bits(e.Logprob), math.Float64bits(got.Logprob), "%s: token %d", round, e.Pos)
		}
	}
	stop()
	select {
	case err := <-exited:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "kvref serve did not stop")
	}
}
