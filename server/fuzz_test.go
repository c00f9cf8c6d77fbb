package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
)

// FuzzParseRequest: any body given to the completion and chat parsers is either refused
// with a 4xx OpenAI error that says something, or accepted with prompts that fit the
// context and parameters within the limits; neither parser panics.
//
//	go test -fuzz FuzzParseRequest -run '^$' ./server
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{
		`{"prompt": "Once upon a time", "max_tokens": 4, "temperature": 0.5, "logprobs": 2}`,
		`{"prompt": [[1, 2, 3], [4, 5]], "n": 2, "stop": ["a", "b"], "stop_token_ids": [3]}`,
		`{"prompt": "a", "echo": true, "max_tokens": 0, "logprobs": 1, "prompt_logprobs": 2}`,
		`{"prompt": "a", "temprature": 0}`,
		`{"messages": [{"role": "user", "content": "Hi"}], "max_completion_tokens": 3}`,
		`{"messages": [{"role": "developer", "content": [{"type": "text", "text": "x"}]}], "chat_template_kwargs": {"enable_thinking": false}}`,
		`{"messages": [{"role": "user", "content": "Hi"}], "chat_template_kwargs": {"messages": []}}`,
		`{"messages": [], "stream": true, "stream_options": {"include_usage": true}}`,
		`[1, 2]`, `{"prompt": "a",`, `{"prompt": "a"} x`,
	} {
		f.Add([]byte(seed))
	}
	m, err := synth.Tiny.Model()
	if err != nil {
		f.Fatal(err)
	}
	eng, err := engine.New(m, engine.Config{Threads: 1})
	if err != nil {
		f.Fatal(err)
	}
	defer eng.Close()
	s := New(eng, Options{Limits: Limits{MaxMessages: 8, MaxContentParts: 4, MaxKwargs: 4, MaxKwargsBytes: 256}})
	f.Fuzz(func(t *testing.T, body []byte) {
		for name, parse := range map[string]func([]byte) (*params, *APIError){"completions": s.parseCompletion, "chat": s.parseChat} {
			p, aerr := parse(body)
			if aerr != nil {
				if aerr.Status < 400 || aerr.Status >= 500 || aerr.Message == "" {
					require.Failf(t, "request parsing", "%s: %q: error %d %q", name, body, aerr.Status, aerr.Message)
				}
				continue
			}
			if len(p.prompts) == 0 || p.n < 1 || p.n > MaxN || p.logprobs > s.opts.MaxLogprobs || p.sampling.Temperature > MaxTemperature {
				require.Failf(t, "request parsing", "%s: %q: accepted out of bounds: %d prompts, n %d, logprobs %d, temperature %g", name, body, len(p.prompts), p.n, p.logprobs, p.sampling.Temperature)
			}
			for _, prompt := range p.prompts {
				if name == "completions" && len(prompt) >= eng.Context() { // a conversation's length is checked by fit
					require.Failf(t, "request parsing", "%s: %q: a prompt of %d tokens for a context of %d", name, body, len(prompt), eng.Context())
				}
			}
		}
	})
}
