package engine

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

func tinyModel(t testing.TB) *model.Model {
	t.Helper()
	m, err := synth.Tiny.Model()
	require.NoError(t, err)
	return m
}

func newEngine(t testing.TB, m *model.Model, cfg Config) *Engine {
	t.Helper()
	e, err := New(m, cfg)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	return e
}

func greedy(prompt []int, n int) Request {
	return Request{Prompt: prompt, MaxTokens: n, IgnoreEOS: true, Check: true}
}

func collect(t *testing.T, e *Engine, req Request) ([]Token, Result) {
	t.Helper()
	var toks []Token
	res, err := e.Generate(req, func(tk Token) error {
		toks = append(toks, tk)
		return nil
	})
	require.NoError(t, err)
	return toks, res
}

// TestCachedEqualsReferenceAcrossBlockSizes checks the numeric contract directly: logits
// through the cache are bit-identical to the cache-free reference and to each other for
// every block size, for every cache type.
func TestCachedEqualsReferenceAcrossBlockSizes(t *testing.T) {
	t.Parallel()

	tiny := tinyModel(t)
	blocks, err := smallShape.Model() // 32-value rows: the block types, which tiny's 16-value rows do not fit
	require.NoError(t, err)
	prompt := []int{1, 5, 9, 200, 17, 3, 250, 8, 8, 8, 100}
	for _, ct := range quant.CacheTypes() {
		m := tiny
		if ct.Validate(m.Config.KVHeads, m.Config.HeadDim) != nil {
			m = blocks
		}
		t.Run(ct.String(), func(t *testing.T) {
			var first []Token
			for _, bs := range []int{1, 2, 3, 16, 64} {
				e := newEngine(t, m, Config{BlockSize: bs, KType: ct, VType: ct, Threads: 2})
				toks, _ := collect(t, e, greedy(prompt, 40))
				require.Len(t, toks, 40)
				if first == nil {
					first = toks
					continue
				}
				require.Equal(t, first, toks, "block size %d", bs)
			}
		})
	}
}

func TestValidateRejectsBadRequests(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	e := newEngine(t, m, Config{Context: 32, BlockSize: 4, CacheBlocks: 2})
	cases := map[string]Request{
		"empty prompt":          {Prompt: nil, MaxTokens: 1},
		"prompt beyond context": {Prompt: make([]int, 40), MaxTokens: 1},
		"max tokens beyond":     {Prompt: []int{1}, MaxTokens: 40},
		"max tokens overflow":   {Prompt: []int{1, 2}, MaxTokens: math.MaxInt}, // 2 + MaxInt wraps negative
		"token outside vocab":   {Prompt: []int{1, 100000}, MaxTokens: 1},
		"pool too small":        {Prompt: make([]int, 12), MaxTokens: 1},
		"negative token":        {Prompt: []int{-1}, MaxTokens: 1},
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := e.Generate(req, func(Token) error { return nil })
			require.Error(t, err)
			require.NoError(t, e.pool.Check())
			require.Zero(t, e.pool.Stats().BlocksUsed, "a refused request must not hold blocks")
		})
	}
}

func TestOutOfBlocksMidDecodeLeavesPoolConsistent(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 2})
	_, err := e.Generate(greedy([]int{1, 2, 3}, 20), func(Token) error { return nil })
	require.Error(t, err)
	require.True(t, errors.Is(err, kvcache.ErrOutOfBlocks), err)
	require.NoError(t, e.pool.Check())
	require.Zero(t, e.pool.Stats().BlocksUsed)
}

// TestStopsAtEOSUnlessIgnored samples at a high temperature until an end-of-text token
// appears: generation must stop right there, and with IgnoreEOS the same seed must produce
// the same tokens and carry on past it.
func TestStopsAtEOSUnlessIgnored(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	e := newEngine(t, m, Config{})
	req := Request{Prompt: []int{1, 50}, MaxTokens: 200, Sampling: Sampling{Temperature: 20, Seed: 1}}
	for seed := uint64(1); seed < 50; seed++ {
		req.Sampling.Seed = seed
		toks, res := collect(t, e, req)
		if res.StopReasons[0] != "eos" {
			require.Equal(t, "length", res.StopReasons[0])
			continue
		}
		for _, tk := range toks[:len(toks)-1] {
			require.False(t, m.Tokenizer.IsEOG(tk.ID))
		}
		require.True(t, m.Tokenizer.IsEOG(toks[len(toks)-1].ID))
		req.IgnoreEOS = true
		more, res := collect(t, e, req)
		require.Equal(t, "length", res.StopReasons[0])
		require.Len(t, more, 200)
		require.True(t, toks[len(toks)-1].Final)
		require.Equal(t, "eos", toks[len(toks)-1].StopReason)
		toks[len(toks)-1].Final, toks[len(toks)-1].StopReason = false, ""
		require.Equal(t, toks, more[:len(toks)])
		return
	}
	require.FailNow(t, "no end-of-text token in 49 high-temperature samples of 200 tokens")
}
