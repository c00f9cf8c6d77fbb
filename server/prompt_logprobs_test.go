package server

import (
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/logit"
	"github.com/kvref/kvref/model/synth"
)

// referenceLogprobs returns the cache-free log-probability of every prompt token after the
// first, and the top k at each position, from the engine's reference pass.
func referenceLogprobs(t *testing.T, ts *testServer, prompt []int, k int) ([]float64, [][]int) {
	t.Helper()
	cfg := ts.eng.Pool().Config()
	ref, err := ts.eng.Runner().Reference(prompt, cfg.KType, cfg.VType, 0)
	require.NoError(t, err)
	var lps []float64
	var tops [][]int
	for p := 0; p+1 < len(prompt); p++ {
		lps = append(lps, logit.LogSoftmax(ref[p])[prompt[p+1]])
		tops = append(tops, logit.TopK(ref[p], k))
	}
	return lps, tops
}

// TestEchoPromptLogprobs: echo with logprobs and max_tokens 0 returns the prompt's tokens
// with null first, their log-probabilities bit for bit the cache-free reference's, before
// and after the prompt is in the prefix cache (fully, then partly); vLLM's
// prompt_logprobs gives the same values with ranks, on completions and chat.
func TestEchoPromptLogprobs(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 4, Sequences: 4}, Options{})
	prompt := []int{1, 17, 33, 8, 91, 45, 12, 7, 66, 23, 5, 88, 19, 41, 3, 70, 28} // 17 tokens
	want, tops := referenceLogprobs(t, ts, prompt, 3)
	for _, round := range []string{"miss", "full hit"} {
		resp := ts.complete(t, map[string]any{"prompt": prompt, "echo": true, "logprobs": 3, "max_tokens": 0})
		c := resp.Choices[0]
		require.Equal(t, "length", *c.FinishReason, round)
		require.Zero(t, resp.Usage.CompletionTokens)
		lp := c.Logprobs
		require.Equal(t, prompt, lp.TokenIDs, round)
		require.Len(t, lp.TokenLogprobs, len(prompt))
		require.True(t, math.IsNaN(lp.TokenLogprobs[0]), "the first token's logprob is null")
		require.Nil(t, lp.TopLogprobs[0])
		for i, w := range want {
			require.Equal(t, math.Float64bits(w), math.Float64bits(lp.TokenLogprobs[i+1]), "%s: position %d", round, i+1)
			for r, id := range tops[i] {
				require.Equal(t, id, lp.TopLogprobsIDs[i+1][r].ID)
			}
		}
		require.Equal(t, 0, lp.TextOffset[0])
		if round == "full hit" {
			require.Equal(t, 16, resp.Usage.PromptTokensDetails.CachedTokens)
		}
	}
	// Partly cached, vLLM's shape, with generation after.
	partial := append(append([]int(nil), prompt[:9]...), 99, 98, 97, 96, 95)
	pw, _ := referenceLogprobs(t, ts, partial, 2)
	status, out := ts.post(t, "/v1/completions", map[string]any{"prompt": partial, "prompt_logprobs": 2, "max_tokens": 2, "temperature": 0})
	require.Equal(t, http.StatusOK, status, string(out))
	var resp CompletionResponse
	require.NoError(t, json.Unmarshal(out, &resp))
	require.Equal(t, 8, resp.Usage.PromptTokensDetails.CachedTokens)
	pl := resp.Choices[0].PromptLogprobs
	require.Len(t, pl, len(partial))
	require.Nil(t, pl[0])
	for i, w := range pw {
		e := pl[i+1][0]
		require.Equal(t, partial[i+1], e.ID)
		require.Equal(t, math.Float64bits(w), math.Float64bits(e.Logprob), "position %d", i+1)
		require.GreaterOrEqual(t, e.Rank, 1)
	}
	require.Equal(t, 2, resp.Usage.CompletionTokens)

	// Chat: the rendered conversation's rows, top-level as vLLM has them.
	body := map[string]any{"messages": userMessages("What is a cat?"), "prompt_logprobs": 1, "max_tokens": 0, "return_token_ids": true}
	var first []PromptPosition
	for range 2 { // miss, then a hit
		status, out = ts.post(t, "/v1/chat/completions", body)
		require.Equal(t, http.StatusOK, status, string(out))
		var chat ChatCompletionResponse
		require.NoError(t, json.Unmarshal(out, &chat))
		cw, _ := referenceLogprobs(t, ts, chat.PromptTokenIDs, 1)
		require.Len(t, chat.PromptLogprobs, len(chat.PromptTokenIDs))
		for i, w := range cw {
			require.Equal(t, math.Float64bits(w), math.Float64bits(chat.PromptLogprobs[i+1][0].Logprob))
		}
		if first != nil {
			require.Equal(t, first, chat.PromptLogprobs)
		}
		first = chat.PromptLogprobs
	}
}

// TestEchoText: echo repeats a text prompt as sent, and the generated text follows it.
func TestEchoText(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	resp := ts.complete(t, map[string]any{"prompt": "Once upon", "echo": true, "max_tokens": 3, "temperature": 0, "logprobs": 0})
	plain := ts.complete(t, map[string]any{"prompt": "Once upon", "max_tokens": 3, "temperature": 0, "logprobs": 0})
	require.Equal(t, "Once upon"+plain.Choices[0].Text, resp.Choices[0].Text)
	lp, gen := resp.Choices[0].Logprobs, plain.Choices[0].Logprobs
	n := len(lp.TokenIDs)
	require.Equal(t, gen.TokenIDs, lp.TokenIDs[n-3:], "the generated tokens follow the prompt's")
	require.Equal(t, len("Once upon")+gen.TextOffset[0], lp.TextOffset[n-3], "generated offsets move past the echoed text")
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"prompt": "a", "max_tokens": 0}, "0 only with echo or prompt_logprobs"},
		{map[string]any{"prompt": "a", "echo": true, "max_tokens": 0, "n": 2}, "n must be 1 with max_tokens 0"},
		{map[string]any{"prompt": "a", "echo": true, "stream": true}, "echo is not supported with stream"},
		{map[string]any{"prompt": "a", "prompt_logprobs": -1}, "prompt_logprobs must be between 0 and 20"},
	} {
		e := ts.apiError(t, "/v1/completions", c.body, http.StatusBadRequest)
		require.Contains(t, e.Message, c.want)
	}
}
