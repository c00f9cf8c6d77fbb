package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
)

// handleCompletions serves POST /v1/completions.
func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, ok := s.readRequest(w, r)
	if !ok {
		return
	}
	p, aerr := s.parseCompletion(body)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	s.generate(w, r, p, legacyShape{}, start)
}

// readRequest checks the method and the server's state and reads the body of a generation
// request; on failure it has answered already.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if !allow(w, r, http.MethodPost) {
		return nil, false
	}
	if s.draining.Load() {
		writeError(w, newError(503, serverError, "", "shutting_down", "the server is shutting down"))
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, newError(413, invalidRequest, "", "", "the request body is larger than %d bytes", tooBig.Limit))
			return nil, false
		}
		writeError(w, badRequest("", "reading the request body: %v", err))
		return nil, false
	}
	return body, true
}

// generate runs a validated request on the engine and answers it in shape's format:
// whole, or streamed as Server-Sent Events.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, p *params, shape responseShape, start time.Time) {
	reqs := make([]engine.Request, len(p.prompts))
	for j, prompt := range p.prompts {
		if aerr := s.fit(j, p); aerr != nil {
			writeError(w, aerr)
			return
		}
		reqs[j] = engine.Request{
			Prompt: prompt, MaxTokens: p.maxTokens, IgnoreEOS: p.ignoreEOS, Sampling: p.sampling, N: p.n,
			Check: s.opts.Check, StopTokens: p.stopIDs, StopStrings: p.stops, CacheSalt: p.cacheSalt,
		}
	}
	mb := newMailbox()
	ids, err := s.submit(r.Context(), reqs, mb, p.logprobs >= 0)
	if err != nil {
		if r.Context().Err() == nil {
			writeError(w, engineError(err))
		}
		return
	}
	c := newCompletion(s, p, shape)
	var status int
	if p.stream {
		status = s.stream(r.Context(), w, c, mb, ids)
	} else {
		status = s.respond(r.Context(), w, c, mb, ids)
	}
	if !s.opts.LogRequests {
		return
	}
	outcome := fmt.Sprint(status)
	if status == 0 {
		outcome = "cancelled by the client"
	}
	u := c.usage()
	s.logf("%s %s %s: %d prompt(s) × n=%d, %d prompt tokens (%d cached), %d generated, %.1f ms",
		r.Method, r.URL.Path, outcome, len(p.prompts), p.n, u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens,
		float64(time.Since(start).Microseconds())/1000)
}

// respond waits for every choice and writes one JSON response; it returns the status sent
// (0 when the client went away first).
func (s *Server) respond(ctx context.Context, w http.ResponseWriter, c *completion, mb *mailbox, ids []int) int {
	for c.pending > 0 {
		evs, err := s.next(ctx, mb)
		if err != nil {
			s.cancel(mb, ids)
			if ctx.Err() != nil {
				return 0 // the client is gone: nobody to answer
			}
			return writeError(w, engineError(err))
		}
		for _, ev := range evs {
			if _, aerr := c.apply(ev); aerr != nil {
				s.cancel(mb, ids)
				return writeError(w, aerr)
			}
		}
	}
	return writeJSON(w, http.StatusOK, c.shape.response(c))
}

// stream sends one Server-Sent Event per generated token, `data: {chunk}`, and ends with
// `data: [DONE]`. An error after the stream has begun is sent as a `data: {"error": ...}`
// event before [DONE]. It returns the status sent.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, c *completion, mb *mailbox, ids []int) int {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	flush := func() error { // a writer that cannot flush (some middleware) still streams, late
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return &encodeError{err}
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return err
		}
		return nil
	}
	fail := func(aerr *APIError) int {
		s.cancel(mb, ids)
		if send(ErrorResponse{Error: *aerr}) == nil {
			fmt.Fprint(w, "data: [DONE]\n\n")
			flush()
		}
		return aerr.Status
	}
	if err := flush(); err != nil {
		s.cancel(mb, ids)
		return 0
	}
	for _, chunk := range c.shape.start(c) {
		if err := send(chunk); err != nil {
			s.cancel(mb, ids)
			return 0
		}
	}
	for c.pending > 0 {
		evs, err := s.next(ctx, mb)
		if err != nil {
			if ctx.Err() != nil {
				s.cancel(mb, ids)
				return 0
			}
			return fail(engineError(err))
		}
		for _, ev := range evs {
			choices, aerr := c.apply(ev)
			if aerr != nil {
				return fail(aerr)
			}
			for _, choice := range choices {
				if err := send(c.shape.chunk(c, choice)); err != nil {
					var ee *encodeError
					if errors.As(err, &ee) { // say so, rather than end the stream empty
						return fail(newError(500, serverError, "", "", "encoding the response: %v", ee.err))
					}
					s.cancel(mb, ids)
					return 0
				}
			}
		}
		if err := flush(); err != nil {
			s.cancel(mb, ids)
			return 0
		}
	}
	if c.p.includeUsage {
		if err := send(c.shape.usageChunk(c, c.usage())); err != nil {
			return 0
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flush()
	return http.StatusOK
}

// encodeError is a chunk that JSON cannot carry (a NaN, which the engine's finiteness check
// keeps out of logits): the stream ends with an error event, not silently.
type encodeError struct{ err error }

func (e *encodeError) Error() string { return e.err.Error() }

// completion gathers the events of one HTTP request into its choices.
type completion struct {
	s       *Server
	p       *params
	shape   responseShape
	id      string
	created int64
	choices []choiceState   // prompt j's continuation q is choice j·n + q
	results []engine.Result // per prompt, once it has ended
	pending int             // prompts still running
}

// choiceState is one choice being generated.
type choiceState struct {
	full     []byte         // the bytes of every token so far
	sent     int            // bytes of full already streamed
	text     string         // the final text (cut before a stop string), once finished
	finish   string         // OpenAI's finish reason, once finished
	logprobs *Logprobs      // when asked for
	pending  []pendingToken // tokens whose offsets wait for an unfinished UTF-8 character
	chars    charCounter
}

// pendingToken is a generated token not yet handed out.
type pendingToken struct {
	id    int
	start int           // where its bytes begin in full
	rec   tokenLogprobs // its log-probabilities, when asked for
}

func newCompletion(s *Server, p *params, shape responseShape) *completion {
	c := &completion{
		s: s, p: p, shape: shape, id: shape.idPrefix() + rand.Text(), created: time.Now().Unix(),
		choices: make([]choiceState, len(p.prompts)*p.n),
		results: make([]engine.Result, len(p.prompts)),
		pending: len(p.prompts),
	}
	if p.logprobs >= 0 {
		for i := range c.choices {
			c.choices[i].logprobs = newLogprobs()
		}
	}
	return c
}

// responseShape writes a completion's responses in one API's format: the token deltas
// apply returns (text and legacy logprobs of each token) become its chunks.
type responseShape interface {
	idPrefix() string                                // "cmpl-" or "chatcmpl-"
	response(c *completion) any                      // the whole response, once every choice has ended
	start(c *completion) []any                       // stream chunks before the first token
	chunk(c *completion, delta CompletionChoice) any // the stream chunk of one token's delta
	usageChunk(c *completion, u Usage) any           // the final chunk of stream_options.include_usage
}

// legacyShape is /v1/completions' format.
type legacyShape struct{}

func (legacyShape) idPrefix() string { return "cmpl-" }

func (legacyShape) response(c *completion) any {
	resp := c.header()
	resp.Choices = make([]CompletionChoice, len(c.choices))
	for i := range c.choices {
		ch := &c.choices[i]
		reason := ch.finish
		resp.Choices[i] = CompletionChoice{Index: i, Text: ch.text, Logprobs: ch.logprobs, FinishReason: &reason}
	}
	u := c.usage()
	resp.Usage = &u
	return resp
}

func (legacyShape) start(*completion) []any { return nil }

func (legacyShape) chunk(c *completion, delta CompletionChoice) any {
	chunk := c.header()
	chunk.Choices = []CompletionChoice{delta}
	return chunk
}

func (legacyShape) usageChunk(c *completion, u Usage) any {
	chunk := c.header()
	chunk.Choices = []CompletionChoice{}
	chunk.Usage = &u
	return chunk
}

// header is a legacy response (or chunk) without choices.
func (c *completion) header() CompletionResponse {
	return CompletionResponse{ID: c.id, Object: "text_completion", Created: c.created, Model: c.s.model}
}

// apply takes one event. For tokens it returns their stream chunks, one per token: the
// token's log-probabilities and the text that may be sent now. While the text ends inside
// an unfinished UTF-8 character, the tokens wait (none is returned), because neither their
// text nor their offsets are known yet; the start of a possible stop string is held back
// too, as its bytes must not be sent if it completes.
func (c *completion) apply(ev event) ([]CompletionChoice, *APIError) {
	if ev.done {
		c.pending--
		c.results[ev.job] = ev.res
		if ev.err != nil {
			return nil, engineError(ev.err)
		}
		return nil, nil
	}
	t := ev.tok
	index := ev.job*c.p.n + t.Seq
	ch := &c.choices[index]
	pt := pendingToken{id: t.ID, start: len(ch.full)}
	if ch.logprobs != nil {
		pt.rec = c.s.logprobsOf(t.Logits, t.ID, c.p.logprobs, c.p.tokenIDs)
	}
	ch.full = append(ch.full, c.s.eng.Model.Tokenizer.Piece(t.ID)...)
	ch.pending = append(ch.pending, pt)
	if !ev.last && engine.IncompleteUTF8(ch.full) > 0 {
		return nil, nil
	}
	out := make([]CompletionChoice, len(ch.pending))
	for i, pt := range ch.pending {
		out[i].Index, out[i].tokenID = index, pt.id
		if ch.logprobs != nil {
			pt.rec.offset = ch.chars.at(ch.full, pt.start, ev.last)
			ch.logprobs.add(pt.id, pt.rec)
			out[i].Logprobs = newLogprobs()
			out[i].Logprobs.add(pt.id, pt.rec)
		}
	}
	ch.pending = ch.pending[:0]
	last := &out[len(out)-1]
	if ev.last {
		ch.text, ch.finish = ev.text, finishReason(ev.reason)
		if ch.sent < len(ch.text) {
			last.Text = ch.text[ch.sent:]
		}
		ch.sent = len(ch.full)
		reason := ch.finish
		last.FinishReason = &reason
		return out, nil
	}
	if n := engine.Releasable(ch.full, c.p.stops); n > ch.sent {
		last.Text = string(ch.full[ch.sent:n])
		ch.sent = n
	}
	return out, nil
}

// usage counts the tokens of the prompts that have ended.
func (c *completion) usage() Usage {
	var u Usage
	for _, r := range c.results {
		u.PromptTokens += r.PromptTokens
		u.PromptTokensDetails.CachedTokens += r.PrefixHitTokens
		for _, o := range r.Outputs {
			u.CompletionTokens += len(o)
		}
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// finishReason maps the engine's stop reasons to OpenAI's: an end-of-text token, a stop
// string or a stop token is "stop"; max_tokens or a full context is "length".
func finishReason(engineReason string) string {
	switch engineReason {
	case "eos", "stop":
		return "stop"
	case "length", "context":
		return "length"
	}
	return engineReason
}

// engineError turns an error from the engine or the loop into an API error: a request the
// engine can never run is the client's (400), a stopped server is 503, the rest is 500.
func engineError(err error) *APIError {
	var aerr *APIError
	switch {
	case errors.As(err, &aerr):
		return aerr
	case errors.Is(err, engine.ErrRejected):
		return badRequest("prompt", "%v", err).withCode("request_rejected")
	case errors.Is(err, kvcache.ErrOutOfBlocks):
		return badRequest("", "the KV cache cannot hold this request: %v (ask for fewer tokens or choices, or restart the server with more --cache-blocks)", err).withCode("cache_too_small")
	case errors.Is(err, ErrClosed):
		return newError(503, serverError, "", "shutting_down", "the server is shutting down")
	}
	return newError(500, serverError, "", "", "%v", err)
}
