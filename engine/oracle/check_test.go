package oracle_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/engine/oracle"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/builtin"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// prompt is a deterministic token sequence of n tokens from the model's vocabulary, BOS
// first.
func prompt(m *model.Model, n int) []int {
	out := []int{1}
	for i := 1; len(out) < n; i++ {
		out = append(out, 3+(i*37)%(m.Config.Vocab-3))
	}
	return out
}

// fill runs prompt through the engine's cache (in chunks, so that both attention paths
// write it) and returns the sequence, still live.
func fill(t *testing.T, e *engine.Engine, tokens []int, chunk int) *kvcache.Sequence {
	t.Helper()
	s := e.Pool().AddSequence(tokens[:chunk], "")
	_, err := e.Step([]*kvcache.Sequence{s})
	require.NoError(t, err)
	for s.Len() < len(tokens) {
		next := min(s.Len()+chunk, len(tokens))
		s.Append(tokens[s.Len():next]...)
		_, err := e.Step([]*kvcache.Sequence{s})
		require.NoError(t, err)
	}
	return s
}

// TestOracleAcceptsEveryCacheType: the real stories260K and a synthetic model with heads of
// 16 fill the cache through prefill chunks and single decode rows; for every cache type,
// every stored element is within its format's bound of the exact value, the engine's
// attention matches float64 attention over the decoded rows, and stays within the format's
// bound of attention over the exact ones.
func TestOracleAcceptsEveryCacheType(t *testing.T) {
	t.Parallel()

	small := synth.Shape{Name: "oracle-small", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 96, Context: 512, RopeBase: 10000, Seed: 21}
	sm, err := small.Model()
	require.NoError(t, err)
	st, err := builtin.Model()
	require.NoError(t, err)
	for _, m := range []*model.Model{st, sm} {
		for _, ct := range quant.CacheTypes() {
			if ct.Validate(m.Config.KVHeads, m.Config.HeadDim) != nil {
				continue
			}
			t.Run(fmt.Sprintf("%s/%v", m.Config.Arch+"-"+fmt.Sprint(m.Config.HeadDim), ct), func(t *testing.T) {
				e, err := engine.New(m, engine.Config{BlockSize: 16, KType: ct, VType: ct, Threads: 2})
				require.NoError(t, err)
				defer e.Close()
				s := fill(t, e, prompt(m, 100), 37)
				for range 5 { // decode rows
					s.Append(5)
					_, err := e.Step([]*kvcache.Sequence{s})
					require.NoError(t, err)
				}
				rep, err := oracle.Check(e.Runner(), e.Pool(), s)
				require.NoError(t, err)
				t.Log(rep)
				require.Equal(t, 105, rep.Positions)
				require.LessOrEqual(t, rep.Storage, 1.0)
				require.LessOrEqual(t, rep.Reading, 1.0)
				require.LessOrEqual(t, rep.Result, 1.0)
				if ct == quant.F32 {
					require.Zero(t, rep.Storage, "f32 stores exactly")
				} else {
					require.Positive(t, rep.Storage, "a lossy format rounds")
				}
			})
		}
	}
}

// TestEveryCacheTypeHasAFormat: adding a cache type to quant without its reference decoder
// and bound in engine/oracle/formats.go fails here.
func TestEveryCacheTypeHasAFormat(t *testing.T) {
	t.Parallel()

	for _, ct := range quant.CacheTypes() {
		require.True(t, oracle.HasFormat(ct), "engine/oracle/formats.go has no entry for cache type %v", ct)
	}
}

// TestOracleFollowsSlidingWindows: with sliding-window attention the pool releases the
// blocks that fall out of the window; the oracle checks what is still stored and the
// queries whose window it still holds, attending over the window only.
func TestOracleFollowsSlidingWindows(t *testing.T) {
	t.Parallel()

	swa := synth.Shape{Name: "oracle-swa", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 96, Context: 512, RopeBase: 10000, Seed: 22, SlidingWindow: 16}
	m, err := swa.Model()
	require.NoError(t, err)
	for _, ct := range []quant.CacheType{quant.F32, quant.Int8, quant.Q8_0} {
		e, err := engine.New(m, engine.Config{BlockSize: 4, KType: ct, VType: ct, Threads: 2})
		require.NoError(t, err)
		s := fill(t, e, prompt(m, 60), 9)
		require.Equal(t, kvcache.Hole, s.Table()[0], "the window has moved on")
		rep, err := oracle.Check(e.Runner(), e.Pool(), s)
		require.NoError(t, err, ct.String())
		t.Log(rep)
		e.Close()
	}
}
