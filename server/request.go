package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/tokenizer"
)

// generationFields are the request fields /v1/completions and /v1/chat/completions share.
// Pointer fields tell "absent" from zero. Fields kvref cannot honour are read so that a
// request using them is refused with a clear message instead of being silently answered
// differently; a field that is not here at all is refused as unknown (strict.go).
type generationFields struct {
	Model         string          `json:"model"`
	MaxTokens     *int            `json:"max_tokens"`
	Temperature   *float64        `json:"temperature"`
	TopP          *float64        `json:"top_p"`
	TopK          *int            `json:"top_k"`
	MinP          *float64        `json:"min_p"`
	Seed          json.RawMessage `json:"seed"`
	N             *int            `json:"n"`
	Stop          json.RawMessage `json:"stop"`
	StopTokenIDs  []int           `json:"stop_token_ids"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS bool   `json:"ignore_eos"`
	CacheSalt string `json:"cache_salt"` // vLLM: share cached blocks only with requests of the same salt
	User      string `json:"user"`       // OpenAI: an end-user id; kvref ignores it (it changes no output)
	// CachePrompt is llama.cpp's cache_prompt: true is what kvref always does (reuse cached
	// prefixes); false is accepted only with a cache_salt, which keeps the request's blocks
	// apart from every request of another salt.
	CachePrompt *bool `json:"cache_prompt"`
	// PromptLogprobs is vLLM's prompt_logprobs: the top k log-probabilities at every
	// prompt position (null or absent: none).
	PromptLogprobs *int `json:"prompt_logprobs"`

	// Not supported: refused unless absent or at their neutral value.
	PresencePenalty        *float64           `json:"presence_penalty"`
	FrequencyPenalty       *float64           `json:"frequency_penalty"`
	RepetitionPenalty      *float64           `json:"repetition_penalty"`
	LogitBias              map[string]float64 `json:"logit_bias"`
	MinTokens              *int               `json:"min_tokens"`
	IncludeStopStrInOutput bool               `json:"include_stop_str_in_output"`
	UseBeamSearch          bool               `json:"use_beam_search"`
	Echo                   bool               `json:"echo"`
}

// completionRequest is the JSON body of POST /v1/completions.
type completionRequest struct {
	generationFields
	Prompt                 json.RawMessage `json:"prompt"`
	Logprobs               *int            `json:"logprobs"`
	ReturnTokensAsTokenIDs bool            `json:"return_tokens_as_token_ids"`

	// Not supported: refused unless absent or at their neutral value.
	Suffix *string `json:"suffix"`
	BestOf *int    `json:"best_of"`
}

// params is a validated completion or chat request.
type params struct {
	prompts        [][]int // one engine request each
	promptName     string  // what the prompts are, in messages: "prompt" or "the rendered conversation"
	maxTokens      int
	sampling       engine.Sampling
	n              int
	stops          []string
	stopIDs        []int
	logprobs       int // top log-probabilities per token; -1: no logprobs
	stream         bool
	includeUsage   bool
	ignoreEOS      bool
	tokenIDs       bool        // return_tokens_as_token_ids
	scoreOnly      bool        // max_tokens 0: generate nothing (with echo or prompt_logprobs)
	echo           bool        // echo: the prompt's text (and, with logprobs, tokens) before the generated ones
	promptTexts    []*string   // with echo, each prompt as sent when it was text (nil: token ids)
	promptLogprobs int         // vLLM's prompt_logprobs: top k at each prompt position; -1: none
	cacheSalt      string      // cache_salt
	chat           *chatParams // a /v1/chat/completions request; nil for /v1/completions
}

// parseCompletion decodes and validates a completion request body. Everything cheap is
// checked before the prompts are tokenized (last, one by one), so that a request over a
// limit costs little more than reading it. Prompt lengths against
// the context and the cache are checked by fit.
func (s *Server) parseCompletion(body []byte) (*params, *APIError) {
	var req completionRequest
	if aerr := decodeStrict(body, &req); aerr != nil {
		return nil, aerr
	}
	p := &params{promptName: "prompt", maxTokens: DefaultMaxTokens, logprobs: -1, promptLogprobs: -1, tokenIDs: req.ReturnTokensAsTokenIDs, echo: req.Echo}
	if aerr := s.parseGeneration(&req.generationFields, p); aerr != nil {
		return nil, aerr
	}
	if req.Suffix != nil && *req.Suffix != "" {
		return nil, unsupportedParam("suffix", "kvref does not do fill-in-the-middle")
	}
	if req.BestOf != nil && *req.BestOf != p.n {
		return nil, badRequest("best_of", "best_of (%d) is not supported: kvref returns every continuation it generates; leave best_of out or equal to n (%d)", *req.BestOf, p.n)
	}
	if req.Logprobs != nil {
		if *req.Logprobs < 0 || *req.Logprobs > s.opts.MaxLogprobs {
			return nil, badRequest("logprobs", "logprobs must be between 0 and %d, got %d", s.opts.MaxLogprobs, *req.Logprobs)
		}
		p.logprobs = *req.Logprobs
	}
	if p.echo && p.stream {
		return nil, unsupportedParam("echo", "echo is not supported with stream: true; send stream false")
	}
	var aerr *APIError
	if p.prompts, aerr = s.parsePrompt(req.Prompt, p.n); aerr != nil {
		return nil, aerr
	}
	if p.echo {
		p.promptTexts = promptTexts(req.Prompt)
	}
	return p, nil
}

// parseGeneration validates the fields both endpoints share into p (whose maxTokens holds
// the endpoint's default).
func (s *Server) parseGeneration(req *generationFields, p *params) *APIError {
	if req.Model != "" && req.Model != s.model {
		return newError(404, invalidRequest, "model", "model_not_found",
			"the model %q does not exist: this server serves %q (GET /v1/models)", req.Model, s.model)
	}
	p.n, p.stream, p.ignoreEOS, p.cacheSalt = 1, req.Stream, req.IgnoreEOS, req.CacheSalt
	if aerr := unsupported(req); aerr != nil {
		return aerr
	}
	if aerr := s.parsePromptLogprobs(req, p); aerr != nil {
		return aerr
	}
	if req.MaxTokens != nil {
		scoring := p.echo || p.promptLogprobs >= 0
		switch {
		case *req.MaxTokens < 0 || (*req.MaxTokens == 0 && !scoring):
			return badRequest("max_tokens", "max_tokens must be at least 1 (0 only with echo or prompt_logprobs, to score the prompt), got %d", *req.MaxTokens)
		case *req.MaxTokens == 0 && req.N != nil && *req.N > 1:
			return badRequest("n", "n must be 1 with max_tokens 0: nothing is sampled, got %d", *req.N)
		}
		p.maxTokens, p.scoreOnly = *req.MaxTokens, *req.MaxTokens == 0
	}
	if req.N != nil {
		if *req.N < 1 || *req.N > MaxN {
			return badRequest("n", "n must be between 1 and %d, got %d", MaxN, *req.N)
		}
		p.n = *req.N
	}
	var aerr *APIError
	if p.sampling, aerr = parseSampling(req); aerr != nil {
		return aerr
	}
	lim := s.opts.Limits
	if p.stops, aerr = parseStop(req.Stop, lim); aerr != nil {
		return aerr
	}
	if len(req.StopTokenIDs) > lim.MaxStopIDs {
		return overLimit("stop_token_ids", "--max-stop-ids", "stop_token_ids has %d ids, at most %d are allowed", len(req.StopTokenIDs), lim.MaxStopIDs)
	}
	vocab := s.eng.Model().Config.Vocab
	for i, id := range req.StopTokenIDs {
		if id < 0 || id >= vocab {
			return badRequest("stop_token_ids", "stop_token_ids[%d] = %d is outside the vocabulary (ids 0 to %d)", i, id, vocab-1)
		}
	}
	p.stopIDs = req.StopTokenIDs
	if len(req.CacheSalt) > lim.MaxSaltBytes {
		return overLimit("cache_salt", "--max-salt-bytes", "cache_salt is %d bytes, at most %d are allowed", len(req.CacheSalt), lim.MaxSaltBytes)
	}
	if req.StreamOptions != nil {
		if !req.Stream {
			return badRequest("stream_options", "stream_options is only allowed when stream is true")
		}
		p.includeUsage = req.StreamOptions.IncludeUsage
	}
	return nil
}

// unsupportedParam is the 400 for a field kvref does not implement.
func unsupportedParam(param, why string) *APIError {
	return badRequest(param, "%s is not supported by kvref serve: %s", param, why).withCode("unsupported_parameter")
}

// unsupported refuses the shared request fields kvref does not implement.
func unsupported(req *generationFields) *APIError {
	no := unsupportedParam
	switch {
	case req.PresencePenalty != nil && *req.PresencePenalty != 0:
		return no("presence_penalty", "the sampler has no penalties; leave it out or 0")
	case req.FrequencyPenalty != nil && *req.FrequencyPenalty != 0:
		return no("frequency_penalty", "the sampler has no penalties; leave it out or 0")
	case req.RepetitionPenalty != nil && *req.RepetitionPenalty != 1:
		return no("repetition_penalty", "the sampler has no penalties; leave it out or 1")
	case len(req.LogitBias) > 0:
		return no("logit_bias", "the sampler does not bias logits")
	case req.MinTokens != nil && *req.MinTokens > 0:
		return no("min_tokens", "generation stops at the first stop condition")
	case req.IncludeStopStrInOutput:
		return no("include_stop_str_in_output", "the text is always cut before a matched stop string")
	case req.UseBeamSearch:
		return no("use_beam_search", "kvref samples; it does not search beams")
	case req.CachePrompt != nil && !*req.CachePrompt && req.CacheSalt == "":
		return no("cache_prompt", "kvref always reuses cached prefixes; false is accepted with a cache_salt no other request uses, which has the same effect")
	}
	return nil
}

// parseSampling reads temperature, top_p, top_k, min_p and seed with OpenAI's and vLLM's
// defaults (temperature 1, everything else off). Without a seed the request gets a random
// one.
func parseSampling(req *generationFields) (engine.Sampling, *APIError) {
	sp := engine.Sampling{Temperature: 1, TopP: 1}
	if req.Temperature != nil {
		if *req.Temperature < 0 {
			return sp, badRequest("temperature", "temperature must be ≥ 0 (0: greedy), got %g", *req.Temperature)
		}
		if aerr := finiteAtMost("temperature", *req.Temperature, MaxTemperature); aerr != nil {
			return sp, aerr
		}
		sp.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		if *req.TopP <= 0 || *req.TopP > 1 {
			return sp, badRequest("top_p", "top_p must be in (0, 1], got %g", *req.TopP)
		}
		sp.TopP = *req.TopP
	}
	if req.TopK != nil {
		if *req.TopK < -1 {
			return sp, badRequest("top_k", "top_k must be -1 or 0 (off) or a positive count, got %d", *req.TopK)
		}
		sp.TopK = max(*req.TopK, 0)
	}
	if req.MinP != nil {
		if *req.MinP < 0 || *req.MinP > 1 {
			return sp, badRequest("min_p", "min_p must be in [0, 1], got %g", *req.MinP)
		}
		sp.MinP = *req.MinP
	}
	raw := string(bytes.TrimSpace(req.Seed))
	if raw == "" || raw == "null" {
		sp.Seed = rand.Uint64()
		return sp, nil
	}
	seed, err := parseSeed(raw)
	if err != nil {
		return sp, badRequest("seed", "seed must be an integer (a signed or unsigned 64-bit one), got %s", abbreviate(raw))
	}
	sp.Seed = seed
	return sp, nil
}

// parseSeed reads a 64-bit seed; negative seeds are taken as their two's complement.
func parseSeed(s string) (uint64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return uint64(v), nil
	}
	return strconv.ParseUint(s, 10, 64)
}

// parsePrompt reads the prompt: a string, an array of token ids, or an array of strings or
// of id arrays (a batch: one engine request each). Text is tokenized as kvref run does
// (BOS added when the model's tokenizer adds one) with special tokens parsed ("<|im_start|>"
// in the text is that token), as llama-server and vLLM do; token ids are used as they are. A batch
// is counted against MaxPrompts and MaxChoices (n choices per prompt) before any of it is
// decoded, and each prompt is held to the context as soon as it is read: a text longer
// than any prompt that fits (see maxPromptBytes) before it is tokenized.
func (s *Server) parsePrompt(raw json.RawMessage, n int) ([][]int, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("prompt", "prompt is required: a string, an array of token ids, or an array of those")
	}
	switch raw[0] {
	case '"':
		ids, aerr := s.promptText(raw, "prompt")
		if aerr != nil {
			return nil, aerr
		}
		return [][]int{ids}, nil
	case '[':
	default:
		return nil, badRequest("prompt", "prompt is %s: it must be a string, an array of token ids, or an array of those", rawKind(raw))
	}
	head, _, err := splitArray(raw, 1)
	if err != nil {
		return nil, badRequest("prompt", "prompt is not valid JSON: %v", err)
	}
	if len(head) == 0 {
		return nil, badRequest("prompt", "prompt is an empty array: give a string, token ids, or a batch of those")
	}
	first := rawKind(head[0])
	if first == "a number" { // one prompt of token ids
		ids, aerr := s.promptIDs(raw, "prompt")
		if aerr != nil {
			return nil, aerr
		}
		return [][]int{ids}, nil
	}
	if first != "a string" && first != "an array" {
		return nil, badRequest("prompt", "prompt[0] is %s: the prompt is a string, an array of token ids, or an array of those", first)
	}
	lim := s.opts.Limits
	elems, more, err := splitArray(raw, lim.MaxPrompts)
	switch {
	case err != nil:
		return nil, badRequest("prompt", "prompt is not valid JSON: %v", err)
	case more:
		return nil, overLimit("prompt", "--max-prompts", "the prompt is a batch of more than %d prompts, at most %d are allowed", lim.MaxPrompts, lim.MaxPrompts)
	}
	if len(elems)*n > lim.MaxChoices {
		return nil, overLimit("n", "--max-choices", "%d prompts with n = %d ask for %d choices, at most %d are allowed", len(elems), n, len(elems)*n, lim.MaxChoices)
	}
	out := make([][]int, len(elems))
	for i, e := range elems {
		name := fmt.Sprintf("prompt[%d]", i)
		if kind := rawKind(e); kind != first {
			return nil, badRequest("prompt", "%s is %s, but prompt[0] is %s: a batch is all strings or all token-id arrays", name, kind, first)
		}
		var aerr *APIError
		if first == "a string" {
			out[i], aerr = s.promptText(e, name)
		} else {
			out[i], aerr = s.promptIDs(e, name)
		}
		if aerr != nil {
			return nil, aerr
		}
	}
	return out, nil
}

// promptText decodes a JSON string and tokenizes it, refusing a text too long for the
// context before tokenizing it, and too many tokens right after.
func (s *Server) promptText(raw json.RawMessage, name string) ([]int, *APIError) {
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, badRequest("prompt", "%s is not a valid JSON string: %v", name, err)
	}
	if limit := s.maxPromptBytes(); len(text) > limit {
		return nil, badRequest("prompt", "%s is %d bytes of text, but no prompt that fits the context of %d tokens is longer than %d bytes (4 × %d bytes, the longest token, per token); shorten the prompt",
			name, len(text), s.eng.Context(), limit, s.longestPiece).withCode("context_length_exceeded")
	}
	ids := s.eng.Model().Tokenizer.EncodeSpecial(text, tokenizer.Prompt)
	if aerr := s.promptLength(len(ids), name); aerr != nil {
		return nil, aerr
	}
	return ids, nil
}

// promptIDs converts a JSON array to token ids (range checks come later, in fit), refusing
// an array too long for the context before converting it, or even reading all of it.
func (s *Server) promptIDs(raw json.RawMessage, name string) ([]int, *APIError) {
	arr, more, err := splitArray(raw, s.eng.Context())
	switch {
	case err != nil:
		return nil, badRequest("prompt", "%s is not valid JSON: %v", name, err)
	case more:
		return nil, badRequest("prompt", "%s has more than %d tokens but the context holds %d; shorten the prompt", name, len(arr), s.eng.Context()).withCode("context_length_exceeded")
	}
	if aerr := s.promptLength(len(arr), name); aerr != nil {
		return nil, aerr
	}
	ids := make([]int, len(arr))
	for i, e := range arr {
		if kind := rawKind(e); kind != "a number" {
			return nil, badRequest("prompt", "%s[%d] is %s: token ids are integers", name, i, kind)
		}
		id, err := strconv.ParseInt(string(bytes.TrimSpace(e)), 10, 32)
		if err != nil {
			return nil, badRequest("prompt", "%s[%d] = %s is not a token id (an integer)", name, i, abbreviate(string(e)))
		}
		ids[i] = int(id)
	}
	return ids, nil
}

// splitArray returns the first elements of the JSON array raw, at most limit of them, and
// whether it has more: a batch of a million prompts costs no more to refuse than limit + 1.
func splitArray(raw json.RawMessage, limit int) (elems []json.RawMessage, more bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, false, fmt.Errorf("not an array (%v)", err)
	}
	for dec.More() {
		if len(elems) == limit {
			return elems, true, nil
		}
		var e json.RawMessage
		if err := dec.Decode(&e); err != nil {
			return nil, false, err
		}
		elems = append(elems, e)
	}
	return elems, false, nil
}

// promptLength refuses a prompt of n tokens that leaves no room in the context to generate.
func (s *Server) promptLength(n int, name string) *APIError {
	if ctx := s.eng.Context(); n >= ctx {
		return badRequest("prompt", "%s has %d tokens but the context holds %d (one more is needed to generate); shorten the prompt", name, n, ctx).withCode("context_length_exceeded")
	}
	return nil
}

// maxPromptBytes is the longest text that can tokenize to a prompt the context holds: a
// token stands for at most longestPiece bytes of text, and normalization (NFC, lower case)
// shrinks a text less than 4 times, so a longer text has more tokens than the context. (A
// tokenizer.json normalizer that strips or replaces runs of text can shrink it more; such
// a text is refused all the same.)
func (s *Server) maxPromptBytes() int { return 4 * s.longestPiece * s.eng.Context() }

// longestPiece returns the most bytes of text one token of tok stands for: the longest of
// its pieces and of its vocabulary strings (the text of special tokens), at least 1.
func longestPiece(tok tokenizer.Tokenizer) int {
	n := 1
	for id := range tok.VocabSize() {
		n = max(n, len(tok.Piece(id)), len(tok.TokenText(id)))
	}
	return n
}

// parseStop reads stop: a string or an array of strings, within the limits on their number
// and length.
func parseStop(raw json.RawMessage, lim Limits) ([]string, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var stops []string
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		stops = []string{one}
	} else if err := json.Unmarshal(raw, &stops); err != nil {
		return nil, badRequest("stop", "stop must be a string or an array of strings, got %s", abbreviate(string(raw)))
	}
	if len(stops) > lim.MaxStops {
		return nil, overLimit("stop", "--max-stops", "stop has %d strings, at most %d are allowed", len(stops), lim.MaxStops)
	}
	for i, stop := range stops {
		if len(stop) > lim.MaxStopBytes {
			return nil, overLimit("stop", "--max-stop-bytes", "stop[%d] is %d bytes, at most %d are allowed", i, len(stop), lim.MaxStopBytes)
		}
	}
	return stops, nil
}

// fit checks prompt j against the model and the cache: an empty prompt, an id outside the
// vocabulary, a prompt or prompt + max_tokens longer than the context, and a continuation
// that the whole cache could not hold are refused before anything runs.
func (s *Server) fit(j int, p *params) *APIError {
	prompt := p.prompts[j]
	name := p.promptName
	if len(p.prompts) > 1 {
		name = fmt.Sprintf("prompt[%d]", j)
	}
	param, shorten := "prompt", "shorten the prompt"
	if p.chat != nil {
		param, shorten = "messages", "shorten the conversation"
	}
	vocab, ctx := s.eng.Model().Config.Vocab, s.eng.Context()
	switch {
	case len(prompt) == 0:
		return badRequest(param, "%s is empty: there is no token to start from", name)
	case len(prompt) >= ctx:
		return badRequest(param, "%s has %d tokens but the context holds %d (one more is needed to generate); %s", name, len(prompt), ctx, shorten).withCode("context_length_exceeded")
	case p.maxTokens > ctx-len(prompt): // not len(prompt)+maxTokens > ctx: the sum can overflow
		return badRequest("max_tokens", "%s (%d tokens) + max_tokens (%d) exceed the context of %d; lower max_tokens to at most %d or %s",
			name, len(prompt), p.maxTokens, ctx, ctx-len(prompt), shorten).withCode("context_length_exceeded")
	}
	for i, id := range prompt {
		if id < 0 || id >= vocab {
			return badRequest(param, "%s token %d (at position %d) is outside the vocabulary: ids go from 0 to %d", name, id, i, vocab-1)
		}
	}
	// The last generated token is never stored: a continuation holds prompt + max_tokens - 1.
	cfg := s.eng.Pool().Config()
	if need := cfg.BlocksFor(len(prompt) + p.maxTokens - 1); need > cfg.NumBlocks {
		return badRequest("max_tokens", "the KV cache cannot hold this request: %s (%d tokens) + max_tokens (%d) need %d blocks of %d tokens, the cache has %d; lower max_tokens or restart the server with more --cache-blocks",
			name, len(prompt), p.maxTokens, need, cfg.BlockSize, cfg.NumBlocks).withCode("cache_too_small")
	}
	return nil
}

// jsonError explains a body that does not decode.
func jsonError(err error) *APIError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badRequest("", "the request body is not valid JSON: %v (at byte %d)", err, syn.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return badRequest("", "the request body must be a JSON object, got a JSON %s", typ.Value)
	case errors.As(err, &typ):
		field := strings.TrimPrefix(typ.Field, "generationFields.") // the embedded struct's name is no JSON field
		return badRequest(field, "%s must be %s, got a JSON %s", field, goTypeName(typ.Type.String()), typ.Value)
	}
	return badRequest("", "the request body does not decode: %v", err)
}

// goTypeName says what a Go field type means in JSON.
func goTypeName(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"), t == "json.Number":
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map"), strings.HasPrefix(t, "struct"):
		return "an object"
	}
	return t
}

// rawKind names the JSON kind of an undecoded value by its first byte.
func rawKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number"
}

// abbreviate shortens s for an error message.
func abbreviate(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
