package server

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model/builtin"
)

// TestTextPromptsParseSpecialTokens: a text prompt's special-token text becomes those
// tokens, as llama-server does: the prompt tokens are llama-server's own ids for it
// (tokenizer/testdata/special/llama-server-special.jsonl, the built-in model's vocabulary),
// and the completion is the one the ids give.
func TestTextPromptsParseSpecialTokens(t *testing.T) {
	m, err := builtin.Model()
	require.NoError(t, err)
	ts := startModel(t, m, engine.Config{BlockSize: 16}, Options{})
	n := 0
	for _, v := range testutil.SpecialVectors(t, "llama-server-special.jsonl", "stories260K") {
		if slices.Equal(m.Tokenizer.Encode(v.Input, true), v.IDsWithSpecial) {
			continue // only the prompts where parsing special tokens matters
		}
		body := map[string]any{"prompt": v.Input, "max_tokens": 2, "temperature": 0, "ignore_eos": true, "logprobs": 1}
		text := ts.complete(t, body)
		require.Equal(t, len(v.IDsWithSpecial), text.Usage.PromptTokens, "prompt %q: llama-server gives %v", v.Input, v.IDsWithSpecial)
		body["prompt"] = v.IDsWithSpecial
		ids := ts.complete(t, body)
		require.Equal(t, ids.Choices[0].Logprobs.TokenIDs, text.Choices[0].Logprobs.TokenIDs, "prompt %q", v.Input)
		n++
	}
	require.GreaterOrEqual(t, n, 10, "prompts whose special tokens parse")
}
