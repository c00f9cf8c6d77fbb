package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
)

// TestStories260KGoldens serves the real stories260K model and requires, over HTTP, the
// golden token ids of an independent engine at every step of every golden file — with the
// prompts sent as text and as ids, alone and all at once.
func TestStories260KGoldens(t *testing.T) {
	path := testutil.Shared(t, "models/stories260K.gguf")
	goldens := testutil.Goldens(t, "stories260K")
	m, err := model.LoadGGUF(path)
	require.NoError(t, err)
	defer m.Close()
	ts := startModel(t, m, engine.Config{BlockSize: 16}, Options{})

	body := func(g testutil.Golden, asText bool) map[string]any {
		b := map[string]any{"model": "stories260K.gguf", "prompt": g.PromptIDs, "max_tokens": len(g.Steps), "temperature": 0, "ignore_eos": true, "logprobs": 5}
		if asText {
			b["prompt"] = g.Prompt
		}
		return b
	}
	want := func(g testutil.Golden) []int {
		var ids []int
		for _, s := range g.Steps {
			ids = append(ids, s.ID)
		}
		return ids
	}
	for _, g := range goldens {
		for _, asText := range []bool{false, true} {
			resp := ts.complete(t, body(g, asText))
			c := resp.Choices[0]
			require.Equal(t, want(g), c.Logprobs.TokenIDs, "%s (prompt as text: %v)", g.Name, asText)
			require.Equal(t, len(g.PromptIDs), resp.Usage.PromptTokens)
			require.Equal(t, "length", *c.FinishReason)
			var text strings.Builder
			for _, id := range c.Logprobs.TokenIDs {
				text.Write(ts.model.Tokenizer.Piece(id))
			}
			require.Equal(t, text.String(), c.Text)
			for i, top := range c.Logprobs.TopLogprobsIDs {
				require.Equal(t, c.Logprobs.TokenIDs[i], top[0].ID, "%s step %d: greedy takes the top token", g.Name, i)
			}
		}
	}

	// All goldens at once, twice each: the same ids and log-probabilities as alone.
	alone := make([]CompletionResponse, len(goldens))
	for i, g := range goldens {
		alone[i] = ts.complete(t, body(g, false))
	}
	together := make([]CompletionResponse, 2*len(goldens))
	var wg sync.WaitGroup
	for i := range together {
		wg.Go(func() {
			out, _ := json.Marshal(body(goldens[i%len(goldens)], false))
			resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(string(out)))
			if err != nil {
				return
			}
			defer resp.Body.Close()
			json.NewDecoder(resp.Body).Decode(&together[i])
		})
	}
	wg.Wait()
	for i := range together {
		require.NotEmpty(t, together[i].Choices, "request %d failed", i)
		require.Equal(t, alone[i%len(goldens)].Choices, together[i].Choices, "request %d", i)
	}
	require.Greater(t, ts.stats(t).Engine.SequencesMax, 1)
}

// TestStories260KStopString: real text cut before a stop string, streamed and not.
func TestStories260KStopString(t *testing.T) {
	path := testutil.Shared(t, "models/stories260K.gguf")
	m, err := model.LoadGGUF(path)
	require.NoError(t, err)
	defer m.Close()
	ts := startModel(t, m, engine.Config{}, Options{})

	body := map[string]any{"prompt": "Once upon a time", "max_tokens": 100, "temperature": 0}
	full := ts.complete(t, body).Choices[0].Text
	dot := strings.Index(full, ".")
	require.Positive(t, dot, "the greedy story has a full stop: %q", full)

	body["stop"] = []string{"."}
	got := ts.complete(t, body).Choices[0]
	require.Equal(t, full[:dot], got.Text)
	require.Equal(t, "stop", *got.FinishReason)

	// A stop string of two words spanning several tokens.
	words := strings.Fields(full[:dot])
	require.GreaterOrEqual(t, len(words), 4, full)
	stop := words[2] + " " + words[3]
	body["stop"] = stop
	got = ts.complete(t, body).Choices[0]
	require.Equal(t, full[:strings.Index(full, stop)], got.Text)
	body["stream"] = true
	text, _ := streamText(t, ts, body)
	require.Equal(t, got.Text, text)
}
