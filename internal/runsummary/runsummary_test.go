package runsummary

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model/builtin"
	"github.com/kvref/kvref/quant"
)

// TestNew takes the cache shape, context and threads from the engine.
func TestNew(t *testing.T) {
	m, err := builtin.Model()
	require.NoError(t, err)
	defer m.Close()
	e, err := engine.New(m, engine.Config{KType: quant.Q8_0, VType: quant.F16, Threads: 1})
	require.NoError(t, err)
	defer e.Close()
	s := New(e, true)
	pc := e.Pool().Config()
	require.Equal(t, "q8_0", s.CacheTypeK)
	require.Equal(t, "f16", s.CacheTypeV)
	require.Equal(t, pc.BlockSize, s.BlockSize)
	require.Equal(t, pc.BytesPerToken(), s.BytesPerToken)
	require.Equal(t, e.Context(), s.Context)
	require.Equal(t, 1, s.Threads)
	require.True(t, s.Check)
}

// TestAdd sums two requests: decode rates count every continuation's tokens but its first,
// which comes from prefill.
func TestAdd(t *testing.T) {
	var s Summary
	s.Add(engine.Result{PromptTokens: 10, PrefixHitTokens: 0, Outputs: [][]int{{1, 2, 3, 4, 5}}, StopReasons: []string{"length"},
		Prefill: 2 * time.Millisecond, Decode: 500 * time.Millisecond})
	s.Add(engine.Result{PromptTokens: 12, PrefixHitTokens: 8, Outputs: [][]int{{1, 2, 3}, {4}}, StopReasons: []string{"eos", "eos"},
		Preemptions: 1, Prefill: 1500 * time.Microsecond, Decode: 1500 * time.Millisecond})
	require.Equal(t, 22, s.PromptTokens)
	require.Equal(t, 8, s.PrefixHitTokens)
	require.Equal(t, 9, s.GeneratedTokens)
	require.InDelta(t, 3.5, s.PrefillMS, 1e-12)
	require.InDelta(t, 2000, s.DecodeMS, 1e-12)
	require.InDelta(t, 3.0, s.TokensPerSecond, 1e-12) // (4 + 2 + 0) tokens in 2 s
	require.Len(t, s.Requests, 2)
	require.Equal(t, []int{3, 1}, s.Requests[1].Generated)
	require.Equal(t, 1, s.Requests[1].Preemptions)
}

// TestFinish takes the peak blocks from the scheduler and the reclaimed ones from the pool,
// group by group.
func TestFinish(t *testing.T) {
	var s Summary
	pool := kvcache.Stats{BlocksReclaimed: 7, Groups: []kvcache.GroupStats{
		{Group: 0, Layers: []int{0, 2}, BlocksCached: 3},
		{Group: 1, Layers: []int{1, 3}, Window: 64, BlocksReclaimed: 7},
	}}
	sched := engine.Stats{PeakBlocksUsed: 20, PeakGroupBlocksUsed: []int{12, 8}}
	s.Finish(pool, sched)
	require.Equal(t, 20, s.BlocksUsed)
	require.Equal(t, int64(7), s.BlocksReclaimed)
	require.Equal(t, []Group{
		{Group: 0, Layers: []int{0, 2}, PeakBlocksUsed: 12, BlocksCached: 3},
		{Group: 1, Layers: []int{1, 3}, Window: 64, PeakBlocksUsed: 8, BlocksReclaimed: 7},
	}, s.Groups)
	require.Equal(t, 20, s.Engine.PeakBlocksUsed)
	require.Equal(t, int64(7), s.Cache.BlocksReclaimed)
}
