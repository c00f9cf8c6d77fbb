package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
)

// TestReserveTwiceThenCompute: callers that reserve to decide (the scheduler before it
// preempts, a session before it samples) and then step rely on a second reservation of the
// same tokens doing nothing; and whether the slots were reserved early or by the step
// itself, the logits are the same, bit for bit, and so is the cache.
func TestReserveTwiceThenCompute(t *testing.T) {
	m := tinyModel(t)
	prompt := ramp(3, 11) // 11 tokens: three blocks of 4, the last one part-filled
	run := func(early bool) ([][]float32, []int) {
		e := newEngine(t, m, Config{BlockSize: 4, CacheBlocks: 8})
		kv := e.pool.AddSequence(prompt, "")
		spans := []span{{kv: kv, n: kv.Len()}}
		if early {
			res, err := e.reserve(spans)
			require.NoError(t, err)
			require.Len(t, res[0].New, 3)
			var events []kvcache.Event
			e.pool.SetObserver(func(ev kvcache.Event) { events = append(events, ev) })
			again, err := e.reserve(spans)
			require.NoError(t, err)
			require.True(t, again[0].Empty(), "a second reservation of the same tokens does nothing: %+v", again[0])
			require.Empty(t, events)
			e.pool.SetObserver(nil)
		}
		_, logits, err := e.step(spans, true)
		require.NoError(t, err)
		require.Len(t, logits, len(prompt), "every=true gives one row of logits per token")
		require.Equal(t, len(prompt), kv.Computed(), "the step commits its tokens")
		require.NoError(t, e.pool.Check())
		return logits, kv.Table()
	}
	lateLogits, lateTable := run(false)
	earlyLogits, earlyTable := run(true)
	require.Equal(t, lateTable, earlyTable)
	require.Equal(t, lateLogits, earlyLogits)
}
