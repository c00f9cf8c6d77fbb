package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
)

// TestEngineHint: each engine limit gets the flags that change it, the engine's typed error
// stays reachable through the hint, and other errors pass unchanged.
func TestEngineHint(t *testing.T) {
	oob := fmt.Errorf("%w: sequence 0 needs 1 more blocks", kvcache.ErrOutOfBlocks)
	cases := []struct {
		err  error
		gen  string
		hint string
	}{
		{&engine.PromptTooLongError{Prompt: 9, Context: 8}, "-n", "; shorten the prompt or raise -c"},
		{&engine.ContextExceededError{Prompt: 2, MaxTokens: 9, Context: 8}, "-n", "; lower -n or raise -c"},
		{&engine.ContextExceededError{Prompt: 2, MaxTokens: 9, Context: 8}, "", "; raise -c"},
		{&engine.CacheTooSmallError{Need: 3, BlockSize: 4, Blocks: 2}, "-n", "; shorten the prompt or raise --cache-blocks"},
		{fmt.Errorf("prompt 1: %w", &engine.CacheFullError{Tokens: 9, Blocks: 2, Err: oob}), "-n or -np", "; lower -n or -np or raise --cache-blocks"},
	}
	for _, c := range cases {
		got := engineHint(c.err, c.gen)
		require.Equal(t, c.err.Error()+c.hint, got.Error())
		require.ErrorIs(t, got, c.err)
		require.True(t, errors.Is(got, engine.ErrRejected) || errors.Is(got, kvcache.ErrOutOfBlocks), "the sentinel stays reachable: %v", got)
	}
	for _, err := range []error{&engine.EmptyPromptError{}, &engine.TokenOutOfVocabError{Token: 9, Vocab: 4}, oob, errors.New("other")} {
		require.Same(t, err, engineHint(err, "-n"), "no flag changes %v", err)
	}
}
