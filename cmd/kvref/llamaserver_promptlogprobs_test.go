package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/internal/testutil"
)

// TestLlamaServerPromptLogprobs runs the documentation's f32 command lines on the
// prompt-logprobs suite: llama.cpp c392e50's llama-server refuses echo ("Unsupported
// param: echo", HTTP 500, before any token), so every scenario is unsupported (a skip, not a
// failure) and kvref verify exits 1 (nothing verified); the requests that generate, which it
// does serve, agree with kvref within the tolerance. With --require prompt-logprobs every
// scenario fails.
func TestLlamaServerPromptLogprobs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts llama-server")
	}
	bin := llamaServerBin(t)
	model := testutil.Shared(t, "models/stories260K.gguf")
	dir := t.TempDir()
	out, stderr, code := kvref(t, "golden", "--model", model, "--suite", "prompt-logprobs", "--out", dir, "-t", "2", "--run", `\.f32$`)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "recorded 4 scenarios")
	c := docLlamaServerCommands(t)["f32"]
	s := startLlamaServer(t, bin, c, model)
	run := verifyDoc(t, c, s, dir, model)
	require.Equal(t, 1, run.code)
	require.Contains(t, run.stderr, "the candidate supports none of the 4 scenarios (all unsupported)")
	for _, sc := range run.rep.Scenarios {
		require.Equal(t, golden.StatusUnsupported, sc.Status, sc.Name)
		require.Empty(t, sc.Failures, sc.Name)
		for _, u := range sc.Unsupported {
			require.Equal(t, golden.FeaturePromptLogprobs, u.Feature)
			require.Contains(t, u.Message, "Unsupported param: echo")
		}
		require.Less(t, sc.WorstError, 0.05, sc.Name)
	}
	run = verifyDoc(t, c, s, dir, model, "--require", "prompt-logprobs")
	require.Equal(t, 1, run.code)
	for _, sc := range run.rep.Scenarios {
		require.Equal(t, golden.StatusFail, sc.Status, sc.Name)
		require.True(t, strings.Contains(sc.Failures[0].Message, "Unsupported param: echo"), sc.Failures[0].Message)
	}
}
