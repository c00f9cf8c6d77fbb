package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/cachedir"
	"github.com/kvref/kvref/internal/hub"
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

// TestLibraryErrorsGetTheCommandsFlags: the libraries' typed errors name no flag; the
// command adds its own, and the typed error stays reachable.
func TestLibraryErrorsGetTheCommandsFlags(t *testing.T) {
	synthModel := filepath.Join(t.TempDir(), "m.gguf")
	_, stderr, code := kvref(t, "synth", "-o", synthModel, "--dim", "30", "--heads", "4", "--kv-heads", "1")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "synth: dim 30 must be a multiple of heads 4 when the shape gives no head dim (or give --head-dim)")

	notModel := filepath.Join(t.TempDir(), "model.bin")
	require.NoError(t, os.WriteFile(notModel, []byte("JUNKJUNK"), 0o644))
	for _, args := range [][]string{{"run", "-m", notModel}, {"tokenize", "-m", notModel, "hi"}, {"inspect", notModel}} {
		_, stderr, code = kvref(t, args...)
		require.Equal(t, 1, code, "%v", args)
		require.Contains(t, stderr, "not a GGUF file", "%v", args)
		require.Contains(t, stderr, "pass its tokenizer with --tokenizer FILE", "%v", args)
	}

	_, stderr, code = kvref(t, "plan", "--preset", "gpt-5")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "(kvref plan --list describes them)")

	for _, err := range []error{&hub.StaleCacheError{Ref: "r", Path: "p", Got: "a", Want: "b"}, fmt.Errorf("x: %w", cachedir.ErrNoDir)} {
		got := pullHint(err)
		require.ErrorIs(t, got, err)
		require.NotEqual(t, err.Error(), got.Error())
	}
	require.Contains(t, pullHint(&hub.StaleCacheError{}).Error(), "download it again with --force")
}
