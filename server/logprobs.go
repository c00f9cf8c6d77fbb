package server

import (
	"strconv"
	"unicode/utf8"

	"github.com/kvref/kvref/internal/logit"
)

// logprobOf is what the engine loop computes of one generated token's logits for a request
// that asked for logprobs: the chosen token's log-probability and the top k. It is all a
// handler needs, so events never carry (and keep alive) a vocabulary-sized logits row.
type logprobOf struct {
	logprob float64     // of the chosen token
	top     []IDLogprob // the top k, best first
}

// logprobsOf computes the log-probabilities of token id chosen from logits, with the top k.
func logprobsOf(logits []float32, id, k int) logprobOf {
	lse := logit.LogSumExp(logits)
	r := logprobOf{logprob: float64(logits[id]) - lse}
	for _, t := range logit.TopK(logits, k) {
		r.top = append(r.top, IDLogprob{ID: t, Logprob: float64(logits[t]) - lse})
	}
	return r
}

// tokenLogprobs is the log-probability record of one generated token.
type tokenLogprobs struct {
	token   string      // the token's text
	logprob float64     // of the chosen token
	top     []IDLogprob // the top k, best first
	topText []string    // the text of each top entry
	offset  int         // text_offset: index of the character where the token begins
}

// withTexts completes the record of token id with the texts of it and its top k (the
// offset is set later).
func (s *Server) withTexts(lp logprobOf, id int, asIDs bool) tokenLogprobs {
	r := tokenLogprobs{token: s.tokenText(id, asIDs), logprob: lp.logprob, top: lp.top}
	for _, e := range lp.top {
		r.topText = append(r.topText, s.tokenText(e.ID, asIDs))
	}
	return r
}

// topLogprobs is OpenAI's top_logprobs entry of r: the top k and the chosen token.
func (r tokenLogprobs) topLogprobs(chosen int) TopLogprobs {
	out := make(TopLogprobs, 0, len(r.top)+1)
	found := false
	for i, e := range r.top {
		out = append(out, TokenLogprob{Token: r.topText[i], Logprob: e.Logprob})
		found = found || e.ID == chosen
	}
	if !found {
		out = append(out, TokenLogprob{Token: r.token, Logprob: r.logprob})
	}
	return out
}

// add appends the record of token id to lp.
func (lp *Logprobs) add(id int, r tokenLogprobs) {
	lp.Tokens = append(lp.Tokens, r.token)
	lp.TokenLogprobs = append(lp.TokenLogprobs, r.logprob)
	lp.TopLogprobs = append(lp.TopLogprobs, r.topLogprobs(id))
	lp.TextOffset = append(lp.TextOffset, r.offset)
	lp.TokenIDs = append(lp.TokenIDs, id)
	top := r.top
	if top == nil {
		top = []IDLogprob{}
	}
	lp.TopLogprobsIDs = append(lp.TopLogprobsIDs, top)
}

// newLogprobs returns empty (not null) lists.
func newLogprobs() *Logprobs {
	return &Logprobs{Tokens: []string{}, TokenLogprobs: LogprobList{}, TopLogprobs: []TopLogprobs{},
		TextOffset: []int{}, TokenIDs: []int{}, TopLogprobsIDs: [][]IDLogprob{}}
}

// tokenText is a token's text in logprobs: the bytes it adds to the output (as JSON shows
// them, invalid UTF-8 becoming U+FFFD), or "token_id:ID" when the request asks for ids.
func (s *Server) tokenText(id int, asIDs bool) string {
	if asIDs {
		return "token_id:" + strconv.Itoa(id)
	}
	return string(s.eng.Model().Tokenizer.Piece(id))
}

// charCounter turns byte positions of a growing text into text_offset values: the index, in
// characters of the text as JSON carries it, of the character a byte belongs to. A valid
// UTF-8 sequence is one character and an invalid byte is one (JSON shows it as U+FFFD), so
// a token that starts inside a multi-byte character gets that character's index.
type charCounter struct {
	pos   int // text[:pos] is decoded ...
	chars int // ... into this many characters
}

// at returns the index of the character holding byte s of text, for s no smaller than at
// the previous call. While the text ends with an unfinished UTF-8 sequence the characters
// from there on are not known yet; final says the text is complete, so that an unfinished
// sequence at its end counts byte by byte, as JSON shows it.
func (c *charCounter) at(text []byte, s int, final bool) int {
	for c.pos < s {
		if !final && !utf8.FullRune(text[c.pos:]) {
			break
		}
		_, size := utf8.DecodeRune(text[c.pos:])
		if c.pos+size > s {
			break // s is inside this character
		}
		c.pos += size
		c.chars++
	}
	return c.chars
}
