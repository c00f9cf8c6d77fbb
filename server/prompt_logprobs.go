package server

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/kvref/kvref/internal/logit"
)

// Prompt log-probabilities, for evaluation harnesses: OpenAI's legacy echo (the prompt's
// tokens and log-probabilities before the generated ones, max_tokens 0 to generate
// nothing) and vLLM's prompt_logprobs. The engine computes the rows of every prompt
// position through the prefix cache (engine.Request.PromptLogits): the same bits as the
// cache-free reference, whether the prompt hit the cache fully, partly or not at all. The
// engine loop turns each row into a promptEntry, as it does for generated tokens, so that
// no event carries a vocabulary of logits.

// promptEntry is what the engine loop computes of one prompt position's logits: the
// log-probability and rank of the prompt's next token and the top k.
type promptEntry struct {
	id      int         // the prompt token at the next position
	logprob float64     // its log-probability
	rank    int         // its rank, 1 for the most likely (vLLM's rank)
	top     []IDLogprob // the top k, best first
}

// promptEntryOf computes the entry of the row whose next prompt token is id.
func promptEntryOf(logits []float32, id, k int) promptEntry {
	lp := logprobsOf(logits, id, k)
	return promptEntry{id: id, logprob: lp.logprob, rank: logit.Rank(logits, id), top: lp.top}
}

// LogprobList is a list of log-probabilities whose NaN entries are null in JSON: the first
// token of an echoed prompt, which nothing predicts (log-probabilities are never NaN
// otherwise: the engine refuses logits that are not finite).
type LogprobList []float64

// MarshalJSON writes NaN as null.
func (l LogprobList) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, v := range l {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) {
			b = append(b, "null"...)
			continue
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b = append(b, vb...)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads null as NaN.
func (l *LogprobList) UnmarshalJSON(data []byte) error {
	var raw []*float64
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if raw == nil {
		*l = nil
		return nil
	}
	out := make(LogprobList, len(raw))
	for i, v := range raw {
		out[i] = math.NaN()
		if v != nil {
			out[i] = *v
		}
	}
	*l = out
	return nil
}

// PromptLogprob is one token of a position in vLLM's prompt_logprobs.
type PromptLogprob struct {
	ID           int
	Logprob      float64
	Rank         int
	DecodedToken string
}

// PromptPosition is one prompt position in vLLM's prompt_logprobs: an object keyed by token
// id, the prompt's own token first, then the top k best first (a token among them once); nil
// (null) for the first position, which nothing predicts.
type PromptPosition []PromptLogprob

// MarshalJSON writes {"id": {"logprob", "rank", "decoded_token"}, ...} in order.
func (p PromptPosition) MarshalJSON() ([]byte, error) {
	if p == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		val, err := json.Marshal(struct {
			Logprob      float64 `json:"logprob"`
			Rank         int     `json:"rank"`
			DecodedToken string  `json:"decoded_token"`
		}{e.Logprob, e.Rank, e.DecodedToken})
		if err != nil {
			return nil, err
		}
		b.WriteString(strconv.Quote(strconv.Itoa(e.ID)))
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object keeping its order.
func (p *PromptPosition) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*p = nil
		return nil
	}
	out := PromptPosition{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		id, err := strconv.Atoi(k.(string))
		if err != nil {
			return err
		}
		var v struct {
			Logprob      float64 `json:"logprob"`
			Rank         int     `json:"rank"`
			DecodedToken string  `json:"decoded_token"`
		}
		if err := dec.Decode(&v); err != nil {
			return err
		}
		out = append(out, PromptLogprob{ID: id, Logprob: v.Logprob, Rank: v.Rank, DecodedToken: v.DecodedToken})
	}
	*p = out
	return nil
}

// vllmPromptLogprobs is prompt j's prompt_logprobs: null for the first token, then each
// position's entry with the top k.
func (c *completion) vllmPromptLogprobs(j int) []PromptPosition {
	k := c.p.promptLogprobs
	prompt := c.p.prompts[j]
	out := make([]PromptPosition, 1, len(prompt))
	for _, e := range c.promptRows[j] {
		pos := PromptPosition{{ID: e.id, Logprob: e.logprob, Rank: e.rank, DecodedToken: c.s.tokenText(e.id, c.p.tokenIDs)}}
		for r, t := range e.top[:min(k, len(e.top))] {
			if t.ID != e.id {
				pos = append(pos, PromptLogprob{ID: t.ID, Logprob: t.Logprob, Rank: r + 1, DecodedToken: c.s.tokenText(t.ID, c.p.tokenIDs)})
			}
		}
		out = append(out, pos)
	}
	return out
}

// echoText is the text an echo repeats for prompt j: the prompt as sent when it was text,
// its tokens' text when it was token ids.
func (c *completion) echoText(j int) string {
	if j < len(c.p.promptTexts) && c.p.promptTexts[j] != nil {
		return *c.p.promptTexts[j]
	}
	var b []byte
	for _, id := range c.p.prompts[j] {
		b = append(b, c.s.eng.Model().Tokenizer.Piece(id)...)
	}
	return string(b)
}

// echoLogprobs puts prompt j's tokens before a choice's generated ones (gen) in the legacy
// format: the first prompt token has null token_logprobs and top_logprobs (nothing
// predicts it); text_offset counts characters of the prompt tokens' text, and the
// generated tokens' offsets move past the echoed text.
func (c *completion) echoLogprobs(j int, gen *Logprobs) *Logprobs {
	prompt := c.p.prompts[j]
	lp := newLogprobs()
	var text []byte
	var chars charCounter
	for i, id := range prompt {
		rec := tokenLogprobs{token: c.s.tokenText(id, c.p.tokenIDs), logprob: math.NaN()}
		rec.offset = chars.at(text, len(text), false)
		text = append(text, c.s.eng.Model().Tokenizer.Piece(id)...)
		if i == 0 {
			lp.Tokens = append(lp.Tokens, rec.token)
			lp.TokenLogprobs = append(lp.TokenLogprobs, rec.logprob)
			lp.TopLogprobs = append(lp.TopLogprobs, nil)
			lp.TextOffset = append(lp.TextOffset, rec.offset)
			lp.TokenIDs = append(lp.TokenIDs, id)
			lp.TopLogprobsIDs = append(lp.TopLogprobsIDs, nil)
			continue
		}
		e := c.promptRows[j][i-1]
		rec.logprob, rec.top = e.logprob, e.top[:min(c.p.logprobs, len(e.top))]
		for _, t := range rec.top {
			rec.topText = append(rec.topText, c.s.tokenText(t.ID, c.p.tokenIDs))
		}
		lp.add(id, rec)
	}
	shift := utf8.RuneCountInString(c.echoText(j))
	if gen != nil {
		lp.Tokens = append(lp.Tokens, gen.Tokens...)
		lp.TokenLogprobs = append(lp.TokenLogprobs, gen.TokenLogprobs...)
		lp.TopLogprobs = append(lp.TopLogprobs, gen.TopLogprobs...)
		for _, o := range gen.TextOffset {
			lp.TextOffset = append(lp.TextOffset, o+shift)
		}
		lp.TokenIDs = append(lp.TokenIDs, gen.TokenIDs...)
		lp.TopLogprobsIDs = append(lp.TopLogprobsIDs, gen.TopLogprobsIDs...)
	}
	return lp
}

// parsePromptLogprobs reads vLLM's prompt_logprobs into p.
func (s *Server) parsePromptLogprobs(req *generationFields, p *params) *APIError {
	if req.PromptLogprobs == nil {
		return nil
	}
	k := *req.PromptLogprobs
	switch {
	case k < 0 || k > s.opts.MaxLogprobs:
		return badRequest("prompt_logprobs", "prompt_logprobs must be between 0 and %d, got %d (vLLM's -1, the whole vocabulary, is not served)", s.opts.MaxLogprobs, k)
	case req.Stream:
		return unsupportedParam("prompt_logprobs", "prompt_logprobs is not supported with stream: true; send stream false")
	}
	p.promptLogprobs = k
	return nil
}

// promptTexts returns each prompt of a completion request as sent when it is text (nil
// entries for token-id prompts), in the order parsePrompt read them.
func promptTexts(raw json.RawMessage) []*string {
	raw = bytes.TrimSpace(raw)
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []*string{&one}
	}
	var many []json.RawMessage
	if json.Unmarshal(raw, &many) != nil {
		return nil
	}
	out := make([]*string, len(many))
	for i, e := range many {
		var t string
		if json.Unmarshal(e, &t) == nil {
			out[i] = &t
		}
	}
	return out
}

// wantsPromptRows reports whether the engine must deliver p's prompt rows, and the top k
// to compute at each: echo with logprobs, or prompt_logprobs.
func (p *params) promptRowsK() (int, bool) {
	k := -1
	if p.echo && p.logprobs >= 0 {
		k = p.logprobs
	}
	k = max(k, p.promptLogprobs)
	return k, k >= 0
}
