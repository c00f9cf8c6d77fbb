package server

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
)

// TestStrictRequests: a field kvref does not know is a 400 naming it, on both endpoints and
// inside nested objects; another engine's field says whose it is; trailing data after the
// body's object is refused; sampling parameters have upper bounds.
func TestStrictRequests(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	msgs := userMessages("Hi")
	cases := []struct {
		name, path string
		body       any
		param      string
		want       string
	}{
		{"typo", "/v1/completions", map[string]any{"prompt": "a", "temprature": 0}, "temprature", "Unrecognized request argument supplied: temprature"},
		{"typo in chat", "/v1/chat/completions", map[string]any{"messages": msgs, "max_tokenz": 3}, "max_tokenz", "Unrecognized request argument supplied: max_tokenz"},
		{"llama.cpp repeat_penalty", "/v1/completions", map[string]any{"prompt": "a", "repeat_penalty": 1.1}, "repeat_penalty", "repeat_penalty (llama.cpp's (llama-server) field"},
		{"llama.cpp n_predict", "/v1/chat/completions", map[string]any{"messages": msgs, "n_predict": 3}, "n_predict", "llama.cpp's (llama-server) field, which kvref does not implement: use max_tokens"},
		{"vLLM guided_json", "/v1/chat/completions", map[string]any{"messages": msgs, "guided_json": map[string]any{}}, "guided_json", "vLLM's field"},
		{"nested", "/v1/completions", map[string]any{"prompt": "a", "stream": true, "stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}}, "continuous_usage_stats", "vLLM's field"},
		{"chat field on completions", "/v1/completions", map[string]any{"prompt": "a", "messages": msgs}, "messages", "Unrecognized request argument supplied: messages"},
		{"completions field on chat", "/v1/chat/completions", map[string]any{"messages": msgs, "suffix": "x"}, "suffix", "Unrecognized request argument supplied: suffix"},
		{"trailing data", "/v1/completions", []byte(`{"prompt": "a"} {"prompt": "b"}`), "", "has more after its JSON object"},
		{"temperature 1e308", "/v1/completions", map[string]any{"prompt": "a", "temperature": 1e308}, "temperature", "temperature must be at most 100, got 1e+308"},
		{"temperature 101 in chat", "/v1/chat/completions", map[string]any{"messages": msgs, "temperature": 101}, "temperature", "at most 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := ts.apiError(t, c.path, c.body, http.StatusBadRequest)
			require.Contains(t, e.Message, c.want)
			require.Equal(t, invalidRequest, e.Type)
			if c.param != "" {
				require.NotNil(t, e.Param)
				require.Equal(t, c.param, *e.Param)
			}
		})
	}
	// OpenAI's user is accepted (and changes nothing); temperature 100 is the bound itself.
	ts.complete(t, map[string]any{"prompt": "a", "max_tokens": 2, "user": "me", "temperature": 100})
}

// TestDeveloperRole: OpenAI's "developer" message renders as a system message.
func TestDeveloperRole(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	asSystem := ts.chat(t, map[string]any{"messages": []map[string]any{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}}, "max_tokens": 3, "temperature": 0, "return_token_ids": true})
	asDeveloper := ts.chat(t, map[string]any{"messages": []map[string]any{{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}}, "max_tokens": 3, "temperature": 0, "return_token_ids": true})
	require.Equal(t, asSystem.PromptTokenIDs, asDeveloper.PromptTokenIDs)
	require.Equal(t, asSystem.Choices[0].Message.Content, asDeveloper.Choices[0].Message.Content)
}
