package engine

import (
	"errors"
	"time"
)

// Request is one prompt to continue.
type Request struct {
	Prompt      []int    // token ids, BOS included when the model wants one
	MaxTokens   int      // tokens to generate per sequence; < 0: until a stop or the context is full
	IgnoreEOS   bool     // keep going past end-of-generation tokens
	Sampling    Sampling // sampling parameters (continuation i uses a seed derived from Seed and i)
	N           int      // parallel continuations forked from the prompt (≤ 1: one)
	Check       bool     // compare every step's logits bit for bit with the cache-free reference
	StopTokens  []int    // further token ids that end generation (included in the output)
	StopStrings []string // generation ends when the output text contains one of these
	CacheSalt   string   // requests share cached blocks only with requests of the same salt (vLLM's cache_salt)
	// PromptLogits asks for the logits of every prompt position but the last (the row that
	// predicts the prompt's next token), delivered by Scheduler.PromptRows once each, in
	// position order, before the first generated token: the rows a prefix hit took from
	// the cache are recomputed from the cached K/V without writing them (prompt_logits.go).
	// With Check, they are held until the prompt's last row and released only once the
	// cache-free reference has recomputed them bit for bit.
	PromptLogits bool
	// ScoreOnly generates nothing: the request ends, with stop reason "length" and no
	// tokens, once its prompt is computed (and, with PromptLogits, its rows delivered).
	ScoreOnly bool
}

// State is where a sequence is in its life.
type State int

// The states of a sequence: waiting → running → finished, and running → preempted →
// (waiting again) → running when the cache runs out of blocks.
const (
	Waiting State = iota
	Running
	Preempted
	Finished
)

var stateNames = [...]string{"waiting", "running", "preempted", "finished"}

// String names the state ("waiting", "running", ...).
func (s State) String() string { return stateNames[s] }

// Token is one generated token and the logits it was chosen from.
type Token struct {
	Request int       // the request's id (from Scheduler.Add)
	Seq     int       // index of the continuation within the request (0..N-1)
	Step    int       // 0 for the first generated token of the continuation
	Pos     int       // position of the token in its sequence
	ID      int       // the chosen token
	Logits  []float32 // the raw logits it was sampled from

	Final      bool   // the continuation ended with this token
	StopReason string // why, when Final: "eos", "stop", "length" or "context"
}

// Result summarises a finished request.
type Result struct {
	Outputs         [][]int       // generated ids, per continuation
	Texts           []string      // generated text per continuation, cut before a matched stop string
	StopReasons     []string      // "eos", "stop", "length", "context" or "cancelled", per continuation
	PromptTokens    int           // tokens in the prompt
	PrefixHitTokens int           // prompt tokens whose K/V came from the cache at first admission
	Preemptions     int           // times one of the request's sequences was preempted
	Prefill         time.Duration // from submission to the first logits
	Decode          time.Duration // from the first logits to the end
}

// ErrRejected marks a request that can never run on this engine (for example a prompt
// larger than the whole cache pool). It is returned by Scheduler.Add and Generate.
var ErrRejected = errors.New("engine: request rejected")

// Validate checks a request against the engine's limits before anything is allocated. The
// errors are the typed errors of errors.go (*PromptTooLongError, *CacheTooSmallError, ...),
// and every one wraps ErrRejected.
func (e *Engine) Validate(req Request) error {
	p := len(req.Prompt)
	vocab := e.model.Config.Vocab
	switch {
	case p == 0:
		return &EmptyPromptError{}
	case p >= e.context:
		return &PromptTooLongError{Prompt: p, Context: e.context, Trained: e.model.Config.Context}
	case req.MaxTokens > 0 && req.MaxTokens > e.context-p: // not p+MaxTokens: that can overflow
		return &ContextExceededError{Prompt: p, MaxTokens: req.MaxTokens, Context: e.context}
	}
	for i, t := range req.Prompt {
		if t < 0 || t >= vocab {
			return &TokenOutOfVocabError{Token: t, Pos: i, Vocab: vocab}
		}
	}
	cfg := e.pool.Config()
	need := 0
	for g := range e.pool.Groups() {
		n := cfg.BlocksFor(p + 1)
		if w := e.groupWindow(g); w > 0 {
			// Computed window by window (Scheduler.chunkSize), a sliding-window sequence
			// (or a sliding cache group of one) never holds more than two windows' blocks.
			n = min(n, cfg.BlocksFor(2*w)+1)
		}
		need += n // every cache group holds its own blocks of the one pool
	}
	if need > cfg.NumBlocks {
		return &CacheTooSmallError{Need: need, BlockSize: cfg.BlockSize, Blocks: cfg.NumBlocks}
	}
	return nil
}
