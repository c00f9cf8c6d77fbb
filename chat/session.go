package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/textstream"
)

// Session is a multi-turn conversation on an engine. Each turn renders the whole
// conversation (system message, every earlier turn, the new user message) and runs it as
// one request. The engine's prefix cache keeps the full blocks of the previous turns, so
// their tokens are reused, not recomputed: a turn computes only what is new since the
// last one (plus the tail of the last block, and any tokens whose re-tokenization differs
// from what the model generated). Turn reports how many.
//
// A Session is not safe for concurrent use, and it assumes nothing else uses the engine
// while a turn runs.
type Session struct {
	Engine    *engine.Engine
	Format    *Formatter
	System    string                 // the system message; "" for none
	Sampling  engine.Sampling        // each turn samples with the seed Sampling.Seed + its index
	MaxTokens int                    // most tokens per reply; < 0: until the end of the turn or a full context
	Check     bool                   // compare every step's logits bit for bit with the cache-free reference
	Scheduler engine.SchedulerConfig // batch budget and prefill chunk size

	history []Message // user and assistant messages, in order
	turns   []Turn
}

// Turn is what one exchange did to the cache.
type Turn struct {
	Reply       string `json:"reply"`
	ReplyTokens []int  `json:"reply_tokens"` // the generated ids, the end-of-turn token included
	StopReason  string `json:"stop_reason"`  // the engine's: "eos", "stop", "length", "context"

	PromptTokens    int `json:"prompt_tokens"`    // the rendered conversation
	ReusedTokens    int `json:"reused_tokens"`    // ... whose K/V came from the prefix cache
	ComputedTokens  int `json:"computed_tokens"`  // ... computed in this turn's prefill
	GeneratedTokens int `json:"generated_tokens"` // the reply, its end-of-turn token included

	Blocks      int   `json:"blocks"`       // blocks the conversation's sequence held at its end
	Bytes       int64 `json:"bytes"`        // ... their bytes (blocks · bytes per block)
	CachedAfter int   `json:"cached_after"` // tokens of prompt + reply the cache holds after the turn
}

// Messages returns the conversation so far, the system message first.
func (s *Session) Messages() []Message {
	var out []Message
	if s.System != "" {
		out = append(out, Message{Role: "system", Content: s.System})
	}
	return append(out, s.history...)
}

// Turns returns the statistics of every turn since the last Reset.
func (s *Session) Turns() []Turn { return s.turns }

// Reset forgets the conversation (the system message stays). Cached blocks stay in the
// pool, evictable: a new conversation with the same system message reuses them.
func (s *Session) Reset() {
	s.history, s.turns = nil, nil
}

// ErrTooLong marks a conversation that no longer fits the context: the turn was not run
// and the conversation is unchanged.
var ErrTooLong = errors.New("chat: the conversation does not fit the context")

// Send runs one turn: the user's message and the model's reply. emit receives the reply's
// text as it is generated (never a partial UTF-8 character, nor text that could still
// become a stop string). A template that refuses the conversation, or a conversation longer
// than the context, is an error and leaves the conversation unchanged.
func (s *Session) Send(user string, emit func(text string) error) (Turn, error) {
	msgs := append(s.Messages(), Message{Role: "user", Content: user})
	_, prompt, err := s.Format.Prompt(Values(msgs), true)
	if err != nil {
		return Turn{}, err
	}
	ctx := s.Engine.Context()
	if len(prompt) >= ctx {
		return Turn{}, fmt.Errorf("%w: the rendered conversation is %d tokens and the context holds %d (one more is needed for a reply); /reset starts a new one", ErrTooLong, len(prompt), ctx)
	}
	maxTokens := ctx - len(prompt)
	if s.MaxTokens >= 0 {
		maxTokens = min(maxTokens, s.MaxTokens)
	}
	sampling := s.Sampling
	sampling.Seed += uint64(len(s.turns))
	req := engine.Request{
		Prompt: prompt, MaxTokens: maxTokens, Sampling: sampling, Check: s.Check,
		StopTokens: s.Format.StopTokens, StopStrings: s.Format.StopStrings,
	}
	var text []byte
	sent := 0
	res, err := s.Engine.GenerateWith(s.Scheduler, req, func(t engine.Token) error {
		text = append(text, s.Engine.Model().Tokenizer.Piece(t.ID)...)
		if t.Final || emit == nil {
			return nil
		}
		if n := textstream.Releasable(text, req.StopStrings); n > sent {
			chunk := string(text[sent:n])
			sent = n
			return emit(chunk)
		}
		return nil
	})
	if err != nil {
		return Turn{}, err
	}
	reply := res.Texts[0]
	if emit != nil && len(reply) > sent {
		if err := emit(reply[sent:]); err != nil {
			return Turn{}, err
		}
	}
	out := res.Outputs[0]
	cfg := s.Engine.Pool().Config()
	stored := len(prompt) + len(out) - 1 // the last generated token's K/V is never computed
	turn := Turn{
		Reply: reply, ReplyTokens: out, StopReason: res.StopReasons[0],
		PromptTokens: res.PromptTokens, ReusedTokens: res.PrefixHitTokens,
		ComputedTokens: res.PromptTokens - res.PrefixHitTokens, GeneratedTokens: len(out),
		Blocks: cfg.BlocksFor(stored), Bytes: int64(cfg.BlocksFor(stored)) * cfg.BytesPerBlock(),
		CachedAfter: s.Engine.Pool().CachedPrefix(slices.Concat(prompt, out), ""),
	}
	s.history = append(s.history, Message{Role: "user", Content: user}, Message{Role: "assistant", Content: reply})
	s.turns = append(s.turns, turn)
	return turn, nil
}

// Save writes the conversation as a JSON array of {"role", "content"} messages, the
// format `kvref template --messages` reads.
func (s *Session) Save(w io.Writer) error {
	b, err := json.MarshalIndent(s.Messages(), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
