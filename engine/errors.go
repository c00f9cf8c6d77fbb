package engine

import "fmt"

// The typed errors of the engine say what was wrong in the engine's own terms: the numbers
// and the Config or Request field that set the limit. They name no command-line flag: a
// command (or a server) finds them with errors.As and adds the hint that fits it. Every
// error of Validate wraps ErrRejected; CacheFullError wraps kvcache.ErrOutOfBlocks.

// EmptyPromptError is a request with no prompt token: there is nothing to start from.
type EmptyPromptError struct{}

// Error says what is missing.
func (*EmptyPromptError) Error() string {
	return "engine: request rejected: the prompt is empty: there is no token to start from (a model that adds BOS gives every prompt one)"
}

// Unwrap returns ErrRejected.
func (*EmptyPromptError) Unwrap() error { return ErrRejected }

// PromptTooLongError is a prompt that fills the engine's context (Config.Context), leaving
// no position for a generated token.
type PromptTooLongError struct {
	Prompt  int // tokens in the prompt
	Context int // the engine's context (Engine.Context)
	Trained int // the context the model was trained for
}

// Error gives the prompt's length and the context.
func (e *PromptTooLongError) Error() string {
	return fmt.Sprintf("engine: request rejected: the prompt has %d tokens but the context holds %d (the engine's Config.Context; the model was trained for %d)",
		e.Prompt, e.Context, e.Trained)
}

// Unwrap returns ErrRejected.
func (*PromptTooLongError) Unwrap() error { return ErrRejected }

// ContextExceededError is a prompt and a number of new tokens (Request.MaxTokens) that
// together need more positions than the context holds.
type ContextExceededError struct {
	Prompt    int // tokens in the prompt
	MaxTokens int // Request.MaxTokens
	Context   int // the engine's context (Engine.Context)
}

// Error gives the three numbers.
func (e *ContextExceededError) Error() string {
	return fmt.Sprintf("engine: request rejected: the prompt (%d tokens) + %d new tokens (Request.MaxTokens) exceed the context of %d; at most %d new tokens fit",
		e.Prompt, e.MaxTokens, e.Context, e.Context-e.Prompt)
}

// Unwrap returns ErrRejected.
func (*ContextExceededError) Unwrap() error { return ErrRejected }

// TokenOutOfVocabError is a prompt token id outside the model's vocabulary.
type TokenOutOfVocabError struct {
	Token int // the id
	Pos   int // its position in the prompt
	Vocab int // the vocabulary's size: ids go from 0 to Vocab-1
}

// Error names the token, its position and the vocabulary's size.
func (e *TokenOutOfVocabError) Error() string {
	return fmt.Sprintf("engine: request rejected: prompt token %d at position %d is outside the vocabulary of %d", e.Token, e.Pos, e.Vocab)
}

// Unwrap returns ErrRejected.
func (*TokenOutOfVocabError) Unwrap() error { return ErrRejected }

// CacheTooSmallError is a prompt that needs more blocks than the whole cache pool has
// (Config.CacheBlocks), even before it generates anything.
type CacheTooSmallError struct {
	Need      int // blocks the prompt (and the slot of its first generated token) needs
	BlockSize int // token slots per block
	Blocks    int // blocks in the pool
}

// Error gives the blocks needed and the blocks there are.
func (e *CacheTooSmallError) Error() string {
	return fmt.Sprintf("engine: request rejected: the cache is too small: the prompt alone needs %d blocks of %d tokens, the pool has %d (Config.CacheBlocks)",
		e.Need, e.BlockSize, e.Blocks)
}

// Unwrap returns ErrRejected.
func (*CacheTooSmallError) Unwrap() error { return ErrRejected }

// CacheFullError ends a request whose sequence has outgrown the whole cache pool: it is the
// only one left running, and its next tokens still do not fit. Err is the pool's error
// (it wraps kvcache.ErrOutOfBlocks).
type CacheFullError struct {
	Tokens int   // the sequence's tokens, prompt and generated
	Blocks int   // blocks in the pool
	Err    error // the pool's out-of-blocks error
}

// Error gives the sequence's length and the pool's size, after the pool's own message.
func (e *CacheFullError) Error() string {
	return fmt.Sprintf("%v; the sequence (%d tokens) no longer fits even alone in the pool of %d blocks (Config.CacheBlocks)", e.Err, e.Tokens, e.Blocks)
}

// Unwrap returns the pool's error.
func (e *CacheFullError) Unwrap() error { return e.Err }
