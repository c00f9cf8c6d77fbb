package runsummary

import (
	"encoding/json"
	"strings"
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

// TestWriteText prints the totals line, then the window, group and check lines only when
// they apply.
func TestWriteText(t *testing.T) {
	s := Summary{CacheTypeK: "q8_0", BytesPerToken: 340, BlockSize: 16}
	s.Add(engine.Result{PromptTokens: 10, PrefixHitTokens: 4, Outputs: [][]int{{1, 2, 3}}, Prefill: time.Millisecond, Decode: time.Second})
	s.Finish(kvcache.Stats{}, engine.Stats{Steps: 3, RowsMean: 4.5, PeakBlocksUsed: 2})
	var b strings.Builder
	s.WriteText(&b, 0)
	require.Equal(t, "kvref: 10 prompt tokens (4 from cache), 3 generated in 3 steps (mean batch 4.5 tokens, 0 preemptions); "+
		"prefill 1.0 ms, decode 1000.0 ms (2.0 tokens/s); cache q8_0, 340 B/token, 2 blocks of 16 used at peak\n", b.String())

	s.Check = true
	s.Finish(kvcache.Stats{BlocksReclaimed: 5, Groups: []kvcache.GroupStats{{Layers: []int{0}}, {Layers: []int{1}, Window: 32, BlocksReclaimed: 5}}},
		engine.Stats{Steps: 3, PeakGroupBlocksUsed: []int{6, 2}, CheckedTokens: 3})
	b.Reset()
	s.WriteText(&b, 32)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 4)
	require.Equal(t, "kvref: sliding window 32: 5 blocks reclaimed as sequences slid past them", lines[1])
	require.Equal(t, "kvref: 2 cache groups of 1 layers: peak blocks per full group 6, per sliding group (window 32) 2; 5 blocks released by the window", lines[2])
	require.Contains(t, lines[3], "--check: 3 of the 3 generated tokens")
}

// TestTokenLineJSON: the field names kvref run --json documents, seq only when set.
func TestTokenLineJSON(t *testing.T) {
	b, err := json.Marshal(TokenLine{Step: 1, Pos: 5, ID: 42, Piece: " the", Top: [][2]float64{{42, -0.5}}})
	require.NoError(t, err)
	require.JSONEq(t, `{"step":1,"pos":5,"id":42,"piece":" the","top":[[42,-0.5]]}`, string(b))
	seq := 3
	b, err = json.Marshal(TokenLine{Seq: &seq})
	require.NoError(t, err)
	require.Contains(t, string(b), `"seq":3`)
}
