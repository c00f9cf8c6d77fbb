package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// completionRequest is the body of POST /v1/completions. Besides OpenAI's fields it carries
// the extensions the common servers understand: ignore_eos, top_k, min_p and
// return_tokens_as_token_ids (vLLM), cache_salt (vLLM's per-request prefix-cache isolation)
// and cache_prompt (llama-server's per-request switch of its prompt cache), the last two
// sent by control runs. OpenAI's user field names the scenario and request, so that server
// logs can be matched with the report.
type completionRequest struct {
	Model                  string         `json:"model,omitempty"`
	Prompt                 any            `json:"prompt"` // []int, or a string when the server does not take token ids
	MaxTokens              int            `json:"max_tokens"`
	Temperature            float64        `json:"temperature"`
	TopP                   *float64       `json:"top_p,omitempty"`
	TopK                   *int           `json:"top_k,omitempty"`
	MinP                   *float64       `json:"min_p,omitempty"`
	Seed                   *uint64        `json:"seed,omitempty"`
	N                      int            `json:"n,omitempty"`
	Logprobs               int            `json:"logprobs"`
	IgnoreEOS              bool           `json:"ignore_eos,omitempty"`
	Stop                   []string       `json:"stop,omitempty"`
	Stream                 bool           `json:"stream,omitempty"`
	StreamOptions          map[string]any `json:"stream_options,omitempty"`
	ReturnTokensAsTokenIDs bool           `json:"return_tokens_as_token_ids,omitempty"`
	CacheSalt              string         `json:"cache_salt,omitempty"`
	CachePrompt            *bool          `json:"cache_prompt,omitempty"`
	User                   string         `json:"user,omitempty"` // "kvref-golden:SCENARIO/REQUEST", for the server's logs
	Echo                   bool           `json:"echo,omitempty"` // the prompt's tokens and log-probabilities first (prompt_logprobs requests)
}

// completionResponse is a /v1/completions response or stream chunk, with every field the
// common servers put token ids and cache statistics in.
type completionResponse struct {
	Choices []completionChoice `json:"choices"`
	Usage   *struct {
		PromptTokens        *int `json:"prompt_tokens"`
		PromptTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Timings *struct {
		CacheN  *int `json:"cache_n"`  // llama-server after mid-2025: prompt tokens taken from the cache
		PromptN *int `json:"prompt_n"` // llama-server: prompt tokens it computed
	} `json:"timings"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type completionChoice struct {
	Index        int             `json:"index"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     *choiceLogprobs `json:"logprobs"`
	TokenIDs     []int           `json:"token_ids"` // some servers (SGLang, vLLM with return_token_ids) put ids here
}

// choiceLogprobs holds the three shapes of per-token log-probabilities:
//   - OpenAI's legacy completions shape: tokens, token_logprobs, top_logprobs (a list of
//     {token: logprob} objects), where vLLM writes tokens as "token_id:N" when asked to
//     return tokens as ids;
//   - kvref's extension of it: token_ids and top_logprobs_ids ([[id, logprob], ...] per step);
//   - llama.cpp's llama-server: content, a list of {id, logprob, top_logprobs: [{id, logprob}]}.
type choiceLogprobs struct {
	Tokens         []string           `json:"tokens"`
	TokenLogprobs  []*Float           `json:"token_logprobs"`
	TopLogprobs    []map[string]Float `json:"top_logprobs"`
	TokenIDs       []int              `json:"token_ids"`
	TopLogprobsIDs [][]Logprob        `json:"top_logprobs_ids"`
	Content        []struct {
		ID          int   `json:"id"`
		Logprob     Float `json:"logprob"`
		TopLogprobs []struct {
			ID      int   `json:"id"`
			Logprob Float `json:"logprob"`
		} `json:"top_logprobs"`
	} `json:"content"`
}

// steps converts a choice's log-probabilities into candidate steps. The token id comes
// from, in order of preference, kvref's token_ids, llama-server's content ids, the
// choice's token_ids, or vLLM's "token_id:N" strings; plain token strings are ambiguous
// and rejected with advice.
func (c *completionChoice) steps() ([]CandidateStep, error) {
	lp := c.Logprobs
	if lp == nil {
		if len(c.TokenIDs) > 0 {
			return nil, fmt.Errorf("the response has token ids but no log-probabilities; does the server honour \"logprobs\"?")
		}
		return nil, nil
	}
	if len(lp.Content) > 0 {
		out := make([]CandidateStep, len(lp.Content))
		for i, e := range lp.Content {
			v := float64(e.Logprob)
			st := CandidateStep{Step: -1, ID: e.ID, Logprob: &v}
			for _, t := range e.TopLogprobs {
				st.Top = append(st.Top, Logprob{t.ID, float64(t.Logprob)})
			}
			slices.SortStableFunc(st.Top, compareLogprobs)
			out[i] = st
		}
		return out, nil
	}
	n := max(len(lp.Tokens), len(lp.TokenIDs))
	idsOf := lp.TokenIDs
	if len(idsOf) == 0 && len(c.TokenIDs) == n {
		idsOf = c.TokenIDs
	}
	out := make([]CandidateStep, n)
	for i := range n {
		st := CandidateStep{Step: -1}
		switch {
		case i < len(idsOf):
			st.ID = idsOf[i]
		case i < len(lp.Tokens):
			id, ok := tokenIDString(lp.Tokens[i])
			if !ok {
				return nil, fmt.Errorf("the server returns token %q as text, not as an id; for vLLM add --return-tokens-as-token-ids (kvref also sends return_tokens_as_token_ids)", lp.Tokens[i])
			}
			st.ID = id
		}
		if i < len(lp.TokenLogprobs) && lp.TokenLogprobs[i] != nil {
			v := float64(*lp.TokenLogprobs[i])
			st.Logprob = &v
		}
		switch {
		case i < len(lp.TopLogprobsIDs):
			st.Top = slices.Clone(lp.TopLogprobsIDs[i])
		case i < len(lp.TopLogprobs):
			for k, v := range lp.TopLogprobs[i] {
				id, ok := tokenIDString(k)
				if !ok {
					return nil, fmt.Errorf("the server returns top log-probabilities keyed by text (%q), not by id; for vLLM add --return-tokens-as-token-ids", k)
				}
				st.Top = append(st.Top, Logprob{id, float64(v)})
			}
		}
		slices.SortStableFunc(st.Top, compareLogprobs)
		out[i] = st
	}
	return out, nil
}

// tokenIDString parses vLLM's "token_id:N".
func tokenIDString(s string) (int, bool) {
	rest, ok := strings.CutPrefix(s, "token_id:")
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(rest)
	return id, err == nil
}

func (r *completionResponse) promptTokens() *int {
	if r.Usage != nil {
		return r.Usage.PromptTokens
	}
	return nil
}

// parseCompletion decodes one response body or stream chunk.
func parseCompletion(b []byte) (*completionResponse, error) {
	var r completionResponse
	if err := json.Unmarshal(cleanJSON(b), &r); err != nil {
		return nil, fmt.Errorf("the server's response is not a completion: %w (%s)", err, truncate(b))
	}
	if r.Error != nil {
		return nil, &serverError{Context: "the server returned an error", Body: r.Error.Message, Message: r.Error.Message}
	}
	return &r, nil
}

// serverError is an error the server returned instead of a completion: an HTTP status
// other than 200, or an error object in a stream.
type serverError struct {
	Context string // the request and status, or "a stream chunk"
	Body    string // what the server sent
	Message string // the error message in it (the body when it has no error object)
}

func (e *serverError) Error() string { return e.Context + ": " + e.Body }

// errorMessage returns the message of an error body: OpenAI's {"error": {"message": ...}},
// {"error": "..."}, {"message": ...} or {"detail": ...} (FastAPI), else the body itself.
func errorMessage(b []byte) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) == nil {
		for _, key := range []string{"error", "message", "detail"} {
			raw, ok := obj[key]
			if !ok {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
			var inner struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(raw, &inner) == nil && inner.Message != "" {
				return inner.Message
			}
			return string(raw) // FastAPI's detail may be a list of field errors
		}
	}
	return string(bytes.TrimSpace(b))
}
