package server

import (
	"crypto/rand"
	"time"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/textstream"
)

// completion gathers the events of one HTTP request into its choices.
type completion struct {
	s          *Server
	p          *params
	shape      responseShape
	id         string
	created    int64
	stops      *textstream.StopMatcher
	choices    []choiceState   // prompt j's continuation q is choice j·n + q
	results    []engine.Result // per prompt, once it has ended
	promptRows [][]promptEntry // per prompt: its positions' log-probabilities, when asked for
	pending    int             // prompts still running
	received   int             // tokens the engine delivered, all choices together
	streamed   int             // token chunks sent to a streaming client
	first      time.Time       // when the first token arrived (zero: none yet)
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
	stops    textstream.StopState // how far the end of full is into each stop string
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
		stops:      textstream.NewStopMatcher(p.stops),
		choices:    make([]choiceState, len(p.prompts)*p.n),
		results:    make([]engine.Result, len(p.prompts)),
		promptRows: make([][]promptEntry, len(p.prompts)),
		pending:    len(p.prompts),
	}
	for i := range c.choices {
		c.choices[i].stops = c.stops.Start()
		if p.logprobs >= 0 {
			c.choices[i].logprobs = newLogprobs()
		}
	}
	return c
}

// apply takes one event. For tokens it returns their stream chunks, one per token: the
// token's log-probabilities and the text that may be sent now. While the text ends inside
// an unfinished UTF-8 character, the tokens wait (none is returned), because neither their
// text nor their offsets are known yet; the start of a possible stop string is held back
// too, as its bytes must not be sent if it completes.
func (c *completion) apply(ev event) ([]CompletionChoice, *APIError) {
	if ev.prompt != nil {
		c.promptRows[ev.job] = append(c.promptRows[ev.job], *ev.prompt)
		return nil, nil
	}
	if ev.end != nil {
		c.pending--
		c.results[ev.job] = ev.end.res
		if ev.end.err != nil {
			return nil, engineError(ev.end.err)
		}
		if _, want := c.p.promptRowsK(); want && len(c.promptRows[ev.job]) != len(c.p.prompts[ev.job])-1 {
			return nil, newError(500, serverError, "", "", "the engine delivered %d prompt log-probabilities of prompt %d, want %d", len(c.promptRows[ev.job]), ev.job, len(c.p.prompts[ev.job])-1)
		}
		for q := range c.p.n { // a continuation that ended without a token (max_tokens 0)
			ch := &c.choices[ev.job*c.p.n+q]
			if ch.finish == "" && q < len(ev.end.res.StopReasons) {
				ch.finish = finishReason(ev.end.res.StopReasons[q])
			}
		}
		return nil, nil
	}
	c.received++
	if c.first.IsZero() {
		c.first = time.Now()
	}
	index := ev.job*c.p.n + ev.seq
	ch := &c.choices[index]
	pt := pendingToken{id: ev.id, start: len(ch.full)}
	if ch.logprobs != nil && ev.lp != nil {
		pt.rec = c.s.withTexts(*ev.lp, ev.id, c.p.tokenIDs)
	}
	piece := c.s.eng.Model().Tokenizer.Piece(ev.id)
	ch.full = append(ch.full, piece...)
	c.stops.Feed(ch.stops, piece)
	ch.pending = append(ch.pending, pt)
	if !ev.last && textstream.IncompleteUTF8(ch.full) > 0 {
		return nil, nil
	}
	out := make([]CompletionChoice, len(ch.pending))
	for i, pt := range ch.pending {
		out[i].Index, out[i].tokenID = index, pt.id
		if ch.logprobs != nil {
			pt.rec.offset = ch.chars.at(ch.full, pt.start, ev.last)
			out[i].Logprobs = newLogprobs()
			out[i].Logprobs.add(pt.id, pt.rec)
			if !c.p.stream { // a stream sends each token's and keeps none
				ch.logprobs.add(pt.id, pt.rec)
			}
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
	if n := len(ch.full) - max(textstream.IncompleteUTF8(ch.full), c.stops.Held(ch.stops)); n > ch.sent {
		last.Text = string(ch.full[ch.sent:n])
		ch.sent = n
	}
	return out, nil
}

// usage counts the request's tokens: every prompt's, and the tokens delivered so far (all
// of them once the request has ended; what was generated before a cancellation otherwise).
// Cached tokens are known for the prompts that have ended.
func (c *completion) usage() Usage {
	var u Usage
	for _, p := range c.p.prompts {
		u.PromptTokens += len(p)
	}
	for _, r := range c.results {
		u.PromptTokensDetails.CachedTokens += r.PrefixHitTokens
	}
	u.CompletionTokens = c.received
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
