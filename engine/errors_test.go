package engine

import (
	"errors"
	"math"
	"reflect"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
)

// flagLike matches a command-line flag (-c, -n, --cache-blocks, ...), which an engine
// error must not name: the command that called the engine adds its own hint.
var flagLike = regexp.MustCompile(`(^|\s|\()--?[a-z]`)

// TestValidateReturnsTypedErrors: each limit Validate enforces comes back as its own type,
// found by errors.As, wrapping ErrRejected, carrying the request's and the engine's numbers,
// and saying so in a message that names no flag.
func TestValidateReturnsTypedErrors(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	e := newEngine(t, m, Config{Context: 32, BlockSize: 4, CacheBlocks: 2})
	vocab := m.Config.Vocab
	cases := []struct {
		name string
		req  Request
		want error  // the typed error, fields filled from the request and Config above
		text string // what the message must say
	}{
		{"empty prompt", Request{MaxTokens: 1}, &EmptyPromptError{}, "the prompt is empty"},
		{"prompt fills the context", Request{Prompt: make([]int, 32), MaxTokens: 1},
			&PromptTooLongError{Prompt: 32, Context: 32, Trained: m.Config.Context}, "the prompt has 32 tokens but the context holds 32"},
		{"max tokens beyond", Request{Prompt: []int{1}, MaxTokens: 40},
			&ContextExceededError{Prompt: 1, MaxTokens: 40, Context: 32}, "the prompt (1 tokens) + 40 new tokens (Request.MaxTokens) exceed the context of 32; at most 31 new tokens fit"},
		{"max tokens overflow", Request{Prompt: []int{1, 2}, MaxTokens: math.MaxInt},
			&ContextExceededError{Prompt: 2, MaxTokens: math.MaxInt, Context: 32}, "exceed the context of 32"},
		{"token outside vocab", Request{Prompt: []int{1, vocab}, MaxTokens: 1},
			&TokenOutOfVocabError{Token: vocab, Pos: 1, Vocab: vocab}, "prompt token 259 at position 1 is outside the vocabulary of 259"},
		{"negative token", Request{Prompt: []int{-1}, MaxTokens: 1},
			&TokenOutOfVocabError{Token: -1, Pos: 0, Vocab: vocab}, "prompt token -1 at position 0"},
		// 12 prompt tokens and the slot of the first generated one: 13 slots, 4 blocks of 4.
		{"pool too small", Request{Prompt: make([]int, 12), MaxTokens: 1},
			&CacheTooSmallError{Need: 4, BlockSize: 4, Blocks: 2}, "the prompt alone needs 4 blocks of 4 tokens, the pool has 2 (Config.CacheBlocks)"},
	}
	require.Equal(t, 259, vocab, "the messages above spell out the vocabulary of synth.Tiny")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := e.Validate(c.req)
			require.ErrorIs(t, err, ErrRejected)
			target := reflect.New(reflect.TypeOf(c.want)) // a *T for the want's T (itself a pointer)
			require.True(t, errors.As(err, target.Interface()), "%T not found in %v", c.want, err)
			require.Equal(t, c.want, target.Elem().Interface())
			require.ErrorContains(t, err, c.text)
			require.NotRegexp(t, flagLike, err.Error(), "an engine error names no command-line flag")
		})
	}
}

// TestCacheFullErrorWhenASequenceOutgrowsThePool: a request alone in the engine whose
// decode growth does not fit ends with a *CacheFullError that still wraps the pool's
// ErrOutOfBlocks, with the sequence's length at the step that did not fit.
func TestCacheFullErrorWhenASequenceOutgrowsThePool(t *testing.T) {
	t.Parallel()

	e := newEngine(t, tinyModel(t), Config{BlockSize: 4, CacheBlocks: 2})
	_, err := e.Generate(greedy([]int{1, 2, 3}, 20), func(Token) error { return nil })
	require.ErrorIs(t, err, kvcache.ErrOutOfBlocks)
	var full *CacheFullError
	require.ErrorAs(t, err, &full)
	// 2 blocks of 4 hold 8 positions: the 9th token (3 prompt + 6 generated) has no slot.
	require.Equal(t, 9, full.Tokens)
	require.Equal(t, 2, full.Blocks)
	require.ErrorContains(t, err, "the sequence (9 tokens) no longer fits even alone in the pool of 2 blocks")
	require.NotRegexp(t, flagLike, err.Error())
}
