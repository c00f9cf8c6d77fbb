package kvref_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
)

func open(t *testing.T, opt kvref.Options) *kvref.Model {
	t.Helper()
	opt.Threads = 1
	m, err := kvref.Open("", opt)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

// TestGenerateAllMatchesGenerate: prompts run together through one scheduler generate what
// each generates alone, sampled continuations included (every request's seeds are its own).
func TestGenerateAllMatchesGenerate(t *testing.T) {
	t.Parallel()

	prompts := []string{"Once upon a time", "The cat sat", "Tom had a big red ball", "Once upon a time, there"}
	p := kvref.Params{MaxTokens: 20, Temperature: 0.9, TopK: 40, Seed: 3, N: 2}
	together, err := open(t, kvref.Options{BlockSize: 4}).GenerateAll(prompts, p)
	require.NoError(t, err)
	require.Len(t, together, len(prompts))
	for i, prompt := range prompts {
		alone, err := open(t, kvref.Options{BlockSize: 4}).Generate(prompt, p)
		require.NoError(t, err)
		require.Equal(t, alone.Tokens, together[i].Tokens, "prompt %d", i)
		require.Equal(t, alone.Texts, together[i].Texts, "prompt %d", i)
		require.Len(t, together[i].Tokens, 2, "two continuations")
		require.Equal(t, together[i].Texts[0], together[i].Text)
	}
}

// TestStreamAddsUpToGenerate: the streamed pieces add up to Generate's text, with and
// without a stop string; the loop's body can look at the pool; breaking out of the loop
// stops generation and frees the request's blocks.
func TestStreamAddsUpToGenerate(t *testing.T) {
	t.Parallel()

	m := open(t, kvref.Options{})
	for _, p := range []kvref.Params{{MaxTokens: 60}, {MaxTokens: 60, Stop: []string{"Lily"}}, {MaxTokens: 30, Temperature: 1, Seed: 9}} {
		r, err := m.Generate("Once upon a time", p)
		require.NoError(t, err)
		var b strings.Builder
		for piece, err := range m.Stream("Once upon a time", p) {
			require.NoError(t, err)
			b.WriteString(piece)
		}
		require.Equal(t, r.Text, b.String(), "%+v", p)
	}
	n := 0
	for range m.Stream("Once upon a time", kvref.Params{MaxTokens: 100}) {
		live := m.Cache() // between two steps the pool is the caller's to look at
		require.Equal(t, 1, live.Stats.Sequences)
		require.Positive(t, live.Stats.BlocksUsed)
		if n++; n == 3 {
			break
		}
	}
	st := m.Cache().Stats
	require.Zero(t, st.BlocksUsed, "the broken-off request's blocks were freed")
	require.Zero(t, st.Sequences)
}

// TestWatchAndErrors: Watch sees the pool's events until stopped; a bad cache type, a
// prompt longer than the context and a bad model reference are errors that say so.
func TestWatchAndErrors(t *testing.T) {
	t.Parallel()

	m := open(t, kvref.Options{CacheType: "q8_0", Context: 32})
	var kinds []kvcache.EventKind
	stop := m.Watch(func(e kvcache.Event) { kinds = append(kinds, e.Kind) })
	_, err := m.Generate("Once upon a time", kvref.Params{MaxTokens: 4})
	require.NoError(t, err)
	require.Contains(t, kinds, kvcache.Allocated)
	require.Contains(t, kinds, kvcache.Released)
	stop()
	seen := len(kinds)
	_, err = m.Generate("Once upon a time", kvref.Params{MaxTokens: 4})
	require.NoError(t, err)
	require.Len(t, kinds, seen, "no event after stop")
	require.Equal(t, "q8_0", m.CacheConfig().KType.String())

	_, err = m.Generate(strings.Repeat("once upon a time ", 20), kvref.Params{})
	require.ErrorIs(t, err, engine.ErrRejected)
	_, err = kvref.Open("", kvref.Options{CacheType: "f12"})
	require.ErrorContains(t, err, `unknown cache type "f12"`)
	_, err = kvref.Open("/nonexistent/model.gguf", kvref.Options{})
	require.ErrorContains(t, err, "/nonexistent/model.gguf")
}
