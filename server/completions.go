package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
)

// handleCompletions serves POST /v1/completions.
func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	s.serveGeneration(w, r, s.parseCompletion, legacyShape{})
}

// serveGeneration serves a generation endpoint: it reads the request (readRequest),
// decodes and validates it with parse, and generates the answer in the endpoint's shape.
// A bad request is answered with parse's error.
func (s *Server) serveGeneration(w http.ResponseWriter, r *http.Request, parse func(body []byte) (*params, *APIError), shape responseShape) {
	start := time.Now()
	body, ok := s.readRequest(w, r)
	if !ok {
		return
	}
	defer s.releaseLarge(len(body))
	p, aerr := parse(body)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	s.generate(w, r, p, shape, start)
}

// readRequest checks the method and the server's state and reads the body of a generation
// request, within MaxBodyBytes (413 past it) and ReadTimeout (408 when it stops arriving;
// the connection is then closed); on failure it has answered already. The writes that
// follow get WriteTimeout from the end of the body.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if !allow(w, r, http.MethodPost) {
		return nil, false
	}
	if s.draining.Load() {
		writeError(w, newError(503, serverError, "", "shutting_down", "the server is shutting down"))
		return nil, false
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.opts.ReadTimeout)) // unsupported: no deadline
	body, err := readBody(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes), r.ContentLength, s.opts.MaxBodyBytes)
	s.armWrite(w)
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		// Clear the deadline: the server's watch for the client going away reads on.
		_ = rc.SetReadDeadline(time.Time{})
		return body, true
	case errors.As(err, &tooBig):
		writeError(w, newError(http.StatusRequestEntityTooLarge, invalidRequest, "", "body_too_large",
			"the request body is larger than %d bytes (the server's limit, kvref serve --max-body)", tooBig.Limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeError(w, newError(http.StatusRequestTimeout, invalidRequest, "", "request_timeout",
			"the request body did not arrive within %s (kvref serve --read-timeout)", s.opts.ReadTimeout))
	default:
		writeError(w, badRequest("", "reading the request body: %v", err))
	}
	return nil, false
}

// armWrite gives the next writes to w WriteTimeout to complete: a client that takes no
// bytes for that long is cut off.
func (s *Server) armWrite(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
}

// generate runs a validated request on the engine and answers it in shape's format: whole,
// or streamed as Server-Sent Events, within RequestTimeout of its arrival (start); then it
// logs it.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, p *params, shape responseShape, start time.Time) {
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	ctx, cancel := context.WithDeadline(r.Context(), start.Add(s.opts.RequestTimeout))
	defer cancel()
	reqs := make([]engine.Request, len(p.prompts))
	promptK, wantRows := p.promptRowsK()
	for j, prompt := range p.prompts {
		if aerr := s.fit(j, p); aerr != nil {
			writeError(w, aerr)
			return
		}
		reqs[j] = engine.Request{
			Prompt: prompt, MaxTokens: p.maxTokens, IgnoreEOS: p.ignoreEOS, Sampling: p.sampling, N: p.n,
			Check: s.opts.Check, StopTokens: p.stopIDs, StopStrings: p.stops, CacheSalt: p.cacheSalt,
			PromptLogits: wantRows, ScoreOnly: p.scoreOnly,
		}
	}
	limit := 0 // a response's events are its own size; a stream's wait for its client
	if p.stream {
		limit = s.opts.StreamBacklog * len(p.prompts) * p.n
	}
	mb := newMailbox(limit)
	ids, err := s.submit(ctx, reqs, mb, p.logprobs, promptK)
	if err != nil {
		if aerr := s.failure(ctx, r, err); aerr != nil {
			s.armWrite(w)
			if aerr.Status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			writeError(w, aerr)
		}
		return
	}
	c := newCompletion(s, p, shape)
	var o outcome
	if p.stream {
		o = s.stream(ctx, w, r, c, mb, ids)
	} else {
		o = s.respond(ctx, w, r, c, mb, ids)
	}
	s.armWrite(w) // for the server's last write of the response
	u := c.usage()
	s.metrics.observe(start, c.first, time.Now(), u, len(p.prompts)*p.n)
	sent := ""
	if p.stream {
		sent = fmt.Sprintf(", %d streamed", c.streamed)
	}
	if info := infoOf(r); info != nil {
		info.outcome = o.String()
		info.detail = fmt.Sprintf("%d prompt(s) × n=%d, %d prompt tokens (%d cached), %d generated%s", len(p.prompts), p.n, u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens, sent)
		info.usage = &u
	}
}

// outcome is how a completion request ended, for the log: the status sent, or why nothing
// (more) could be sent.
type outcome struct {
	status int    // the status sent (200 for a stream that ended in an error event)
	why    string // what ended it early: "cancelled by the client", an error code, ...
}

func (o outcome) String() string {
	switch {
	case o.status == 0:
		return o.why
	case o.why != "":
		return fmt.Sprintf("%d (%s)", o.status, o.why)
	}
	return fmt.Sprint(o.status)
}

// gone says why a request whose client can no longer be answered ended: writing to it
// timed out (werr), the shutdown closed its connection, or the client went away (its
// connection closed, which a write notices as an error too).
func (s *Server) gone(werr error) outcome {
	switch {
	case werr != nil && errors.Is(werr, os.ErrDeadlineExceeded):
		return outcome{why: fmt.Sprintf("cut off: the client took no bytes for %s (kvref serve --write-timeout)", s.opts.WriteTimeout)}
	case s.draining.Load():
		return outcome{why: "cut off by the shutdown"}
	}
	return outcome{why: "cancelled by the client"}
}

// failure turns what ended a wait for events early into the API error to send, or reports
// that the client is gone (nil).
func (s *Server) failure(ctx context.Context, r *http.Request, err error) *APIError {
	switch {
	case r.Context().Err() != nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return newError(http.StatusServiceUnavailable, serverError, "", "request_timeout",
			"the request ran past its deadline of %s (kvref serve --request-timeout) and was cancelled", s.opts.RequestTimeout)
	}
	return engineError(err)
}

// respond waits for every choice and writes one JSON response.
func (s *Server) respond(ctx context.Context, w http.ResponseWriter, r *http.Request, c *completion, mb *mailbox, ids []int) outcome {
	fail := func(aerr *APIError) outcome {
		s.cancel(mb, ids)
		if aerr == nil {
			return s.gone(nil)
		}
		s.armWrite(w)
		writeError(w, aerr)
		return outcome{status: aerr.Status, why: code(aerr)}
	}
	for c.pending > 0 {
		evs, err := s.next(ctx, mb)
		if err != nil {
			return fail(s.failure(ctx, r, err))
		}
		for _, ev := range evs {
			if _, aerr := c.apply(ev); aerr != nil {
				return fail(aerr)
			}
		}
	}
	status, err := s.writeLarge(w, c.shape.response(c))
	if err != nil {
		o := s.gone(err)
		o.status = status
		return o
	}
	return outcome{status: status}
}

// writeLarge sends v with status 200 in pieces of 64 KiB, each with WriteTimeout to go, so
// that a large response to a client reading slowly but steadily is not cut off. It returns
// the status sent, and the error that cut the body short.
func (s *Server) writeLarge(w http.ResponseWriter, v any) (int, error) {
	b, err := json.Marshal(v)
	if err != nil {
		s.armWrite(w)
		return writeJSON(w, http.StatusOK, v), nil // its error response
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	for len(b) > 0 {
		n := min(len(b), 64<<10)
		s.armWrite(w)
		if _, err := w.Write(b[:n]); err != nil {
			return http.StatusOK, err // the client is gone or too slow
		}
		b = b[n:]
	}
	return http.StatusOK, nil
}

// stream sends one Server-Sent Event per generated token, `data: {chunk}`, and ends with
// `data: [DONE]`. An error after the stream has begun (the request's own, a deadline, the
// shutdown, a client too slow to read) is sent as a `data: {"error": ...}` event before
// [DONE].
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, c *completion, mb *mailbox, ids []int) outcome {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.armWrite(w)
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
		_, err = fmt.Fprintf(w, "data: %s\n\n", b)
		return err
	}
	cut := func(werr error) outcome {
		s.cancel(mb, ids)
		return s.gone(werr)
	}
	fail := func(aerr *APIError) outcome {
		s.cancel(mb, ids)
		if aerr == nil {
			return s.gone(nil)
		}
		s.armWrite(w)
		if err := send(ErrorResponse{Error: *aerr}); err != nil {
			return s.gone(err)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		if err := flush(); err != nil {
			return s.gone(err)
		}
		return outcome{status: http.StatusOK, why: code(aerr)}
	}
	if err := flush(); err != nil {
		return cut(err)
	}
	for _, chunk := range c.shape.start(c) {
		if err := send(chunk); err != nil {
			return cut(err)
		}
	}
	for c.pending > 0 {
		evs, err := s.next(ctx, mb)
		if err != nil {
			return fail(s.failure(ctx, r, err))
		}
		s.armWrite(w)
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
					return cut(err)
				}
				c.streamed++
			}
		}
		if err := flush(); err != nil {
			return cut(err)
		}
	}
	s.armWrite(w)
	if c.p.includeUsage {
		if err := send(c.shape.usageChunk(c, c.usage())); err != nil {
			return s.gone(err)
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if err := flush(); err != nil {
		return s.gone(err)
	}
	return outcome{status: http.StatusOK}
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
		j := i / c.p.n
		text, lps := ch.text, ch.logprobs
		if c.p.echo {
			text = c.echoText(j) + text
			if lps != nil {
				lps = c.echoLogprobs(j, lps)
			}
		}
		resp.Choices[i] = CompletionChoice{Index: i, Text: text, Logprobs: lps, FinishReason: &reason}
		if c.p.promptLogprobs >= 0 {
			resp.Choices[i].PromptLogprobs = c.vllmPromptLogprobs(j)
		}
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
	return CompletionResponse{ObjectHeader: c.object("text_completion")}
}

// object is the header of c's response objects of type object.
func (c *completion) object(object string) ObjectHeader {
	return ObjectHeader{ID: c.id, Object: object, Created: c.created, Model: c.s.model}
}

// encodeError is a chunk that JSON cannot carry (a NaN, which the engine's finiteness check
// keeps out of logits): the stream ends with an error event, not silently.
type encodeError struct{ err error }

func (e *encodeError) Error() string { return e.err.Error() }

// code is an API error's code, or "" when it has none.
func code(e *APIError) string {
	if e.Code == nil {
		return ""
	}
	return *e.Code
}

// engineError turns an error from the engine or the loop into an API error: a request the
// engine can never run is the client's (400), a stopped server is 503, the rest is 500.
func engineError(err error) *APIError {
	var aerr *APIError
	switch {
	case errors.As(err, &aerr):
		return aerr
	case errors.Is(err, engine.ErrRejected):
		return rejected(err)
	case errors.Is(err, kvcache.ErrOutOfBlocks):
		return badRequest("", "the KV cache cannot hold this request: %v (ask for fewer tokens or choices, or restart the server with more --cache-blocks)", err).withCode("cache_too_small")
	case errors.Is(err, ErrClosed):
		return newError(503, serverError, "", "shutting_down", "the server is shutting down")
	}
	return newError(500, serverError, "", "", "%v", err)
}
