package server

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ObjectHeader is what every OpenAI response object starts with: its id, its object type,
// when it was made (Unix seconds) and the model that made it. The response types embed
// it, so its fields are theirs and come first in their JSON.
type ObjectHeader struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "text_completion", "chat.completion" or "chat.completion.chunk"
	Created int64  `json:"created"`
	Model   string `json:"model"`
}

// CompletionResponse is the body of a /v1/completions response, and of each streamed chunk
// (whose choices hold one token each and whose usage is absent, except for the final usage
// chunk of stream_options.include_usage).
type CompletionResponse struct {
	ObjectHeader                    // Object: "text_completion"
	Choices      []CompletionChoice `json:"choices"`
	Usage        *Usage             `json:"usage,omitempty"`
}

// CompletionChoice is one continuation. With n choices per prompt, choice index i belongs to
// prompt i / n.
type CompletionChoice struct {
	Index        int       `json:"index"`
	Text         string    `json:"text"`
	Logprobs     *Logprobs `json:"logprobs"`      // null unless the request asked for logprobs
	FinishReason *string   `json:"finish_reason"` // "stop" or "length"; null in a stream until the choice ends
	// PromptLogprobs is vLLM's prompt_logprobs of the choice's prompt, when asked for.
	PromptLogprobs []PromptPosition `json:"prompt_logprobs,omitempty"`

	tokenID int // in a stream chunk: the token the chunk is for
}

// Logprobs are the log-probabilities of a choice's tokens in OpenAI's legacy format, plus
// kvref's exact ids. All lists have one entry per generated token.
type Logprobs struct {
	Tokens         []string      `json:"tokens"`           // each token's text ("token_id:ID" with return_tokens_as_token_ids)
	TokenLogprobs  LogprobList   `json:"token_logprobs"`   // the log-probability of each chosen token (null: an echoed prompt's first token)
	TopLogprobs    []TopLogprobs `json:"top_logprobs"`     // the top-k tokens and the chosen one, {token: logprob}, best first
	TextOffset     []int         `json:"text_offset"`      // index of the character of the choice's text where each token begins
	TokenIDs       []int         `json:"token_ids"`        // the chosen token ids
	TopLogprobsIDs [][]IDLogprob `json:"top_logprobs_ids"` // the top-k ids, [[id, logprob], ...], best first, ties to the lower id
}

// TopLogprobs is one position's most likely tokens, best first. In JSON it is an object
// {token: logprob} whose keys keep that order; a token text that repeats (two byte tokens
// that both print as U+FFFD) appears once, with the higher log-probability, which is why
// top_logprobs_ids exists.
type TopLogprobs []TokenLogprob

// TokenLogprob is a token's text and log-probability.
type TokenLogprob struct {
	Token   string
	Logprob float64
}

// MarshalJSON writes the object in order, skipping repeated keys; nil is null (an echoed
// prompt's first token, which nothing predicts).
func (t TopLogprobs) MarshalJSON() ([]byte, error) {
	if t == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	seen := make(map[string]bool, len(t))
	for _, e := range t {
		key, err := json.Marshal(e.Token)
		if err != nil {
			return nil, err
		}
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		val, err := json.Marshal(e.Logprob)
		if err != nil {
			return nil, err
		}
		if len(seen) > 1 {
			b.WriteByte(',')
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object keeping its key order.
func (t *TopLogprobs) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil { // null
		*t = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("top_logprobs entry: want an object, got %v", tok)
	}
	out := TopLogprobs{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v float64
		if err := dec.Decode(&v); err != nil {
			return err
		}
		out = append(out, TokenLogprob{Token: k.(string), Logprob: v})
	}
	*t = out
	return nil
}

// IDLogprob is a token id and its log-probability; in JSON, the pair [id, logprob].
type IDLogprob struct {
	ID      int
	Logprob float64
}

// MarshalJSON writes [id, logprob].
func (p IDLogprob) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]any{p.ID, p.Logprob})
}

// UnmarshalJSON reads [id, logprob].
func (p *IDLogprob) UnmarshalJSON(data []byte) error {
	var pair []json.Number
	if err := json.Unmarshal(data, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("want [id, logprob], got %s", data)
	}
	id, err := pair[0].Int64()
	if err != nil {
		return fmt.Errorf("want [id, logprob], got %s: %w", data, err)
	}
	lp, err := pair[1].Float64()
	if err != nil {
		return fmt.Errorf("want [id, logprob], got %s: %w", data, err)
	}
	*p = IDLogprob{ID: int(id), Logprob: lp}
	return nil
}

// Usage counts a request's tokens.
type Usage struct {
	PromptTokens        int                 `json:"prompt_tokens"`
	CompletionTokens    int                 `json:"completion_tokens"`
	TotalTokens         int                 `json:"total_tokens"`
	PromptTokensDetails PromptTokensDetails `json:"prompt_tokens_details"`
}

// PromptTokensDetails break the prompt tokens down.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"` // prompt tokens whose K/V came from the prefix cache
}

// ModelList is the body of GET /v1/models.
type ModelList struct {
	Object string      `json:"object"` // "list"
	Data   []ModelInfo `json:"data"`
}

// ModelInfo describes the served model.
type ModelInfo struct {
	ID          string `json:"id"`
	Object      string `json:"object"` // "model"
	Created     int64  `json:"created"`
	OwnedBy     string `json:"owned_by"`
	MaxModelLen int    `json:"max_model_len"` // the context length (vLLM's field)
}

// ErrorResponse is the body of every error: {"error": {"message", "type", "param", "code"}}.
type ErrorResponse struct {
	Error APIError `json:"error"`
}

// APIError is an error in OpenAI's shape, with the HTTP status it is sent with.
type APIError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`  // "invalid_request_error" or "server_error"
	Param   *string `json:"param"` // the request field at fault, if any
	Code    *string `json:"code"`  // a machine-readable code, if any
}

// Error returns the message.
func (e *APIError) Error() string { return e.Message }

// The error types.
const (
	invalidRequest = "invalid_request_error"
	serverError    = "server_error"
)

// badRequest is a 400 about the request field param (may be empty).
func badRequest(param, format string, args ...any) *APIError {
	return newError(400, invalidRequest, param, "", format, args...)
}

func newError(status int, typ, param, code, format string, args ...any) *APIError {
	e := &APIError{Status: status, Type: typ, Message: fmt.Sprintf(format, args...)}
	if param != "" {
		e.Param = &param
	}
	if code != "" {
		e.Code = &code
	}
	return e
}

// withCode sets the error's code.
func (e *APIError) withCode(code string) *APIError {
	e.Code = &code
	return e
}
