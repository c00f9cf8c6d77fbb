package engine

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
)

// promptRun runs reqs through sched to the end and returns each request's prompt rows and
// outputs.
func promptRun(t *testing.T, sched *Scheduler, reqs ...Request) (rows [][]PromptRow, outs [][]int, hits []int) {
	t.Helper()
	ids := make([]int, len(reqs))
	for i, req := range reqs {
		id, err := sched.Add(req)
		require.NoError(t, err)
		ids[i] = id
	}
	byID := map[int][]PromptRow{}
	seenToken := map[int]bool{}
	for !sched.Done() {
		toks, err := sched.Step()
		require.NoError(t, err)
		for _, r := range sched.PromptRows() {
			require.False(t, seenToken[r.Request], "request %d: a prompt row after its first token", r.Request)
			byID[r.Request] = append(byID[r.Request], r)
		}
		for _, tok := range toks {
			seenToken[tok.Request] = true
		}
	}
	for _, id := range ids {
		require.NoError(t, sched.Err(id))
		rows = append(rows, byID[id])
		res := sched.Result(id)
		outs = append(outs, res.Outputs[0])
		hits = append(hits, res.PrefixHitTokens)
	}
	return rows, outs, hits
}

// requireRows checks that rows are prompt positions 0 to len-2 in order, each with the next
// token, and that their logits are the cache-free reference's bit for bit.
func requireRows(t *testing.T, e *Engine, prompt []int, rows []PromptRow, label string) {
	t.Helper()
	cfg := e.Pool().Config()
	ref, err := e.Runner().Reference(prompt, cfg.KType, cfg.VType, 0)
	require.NoError(t, err)
	require.Len(t, rows, len(prompt)-1, label)
	for p, r := range rows {
		require.Equal(t, p, r.Pos, label)
		require.Equal(t, prompt[p+1], r.Next, label)
		require.NoError(t, Compare(r.Logits, ref[p], 0, -1, p), "%s: position %d", label, p)
	}
}

// TestPromptLogitsThroughThePrefixCache: a request's prompt rows are the cache-free
// reference's bit for bit with no prefix hit, a partial one, a full one (every block the
// prompt can reuse) and a block-aligned prompt, in f32 and in quantized caches; the cached
// blocks are neither copied nor changed (no copy-on-write, and a checked request reusing
// them afterwards passes); and the same overlapping prompts give the same rows in either
// order.
func TestPromptLogitsThroughThePrefixCache(t *testing.T) {
	m, err := smallShape.Model()
	require.NoError(t, err)
	base := ramp(11, 23) // 23 tokens: 5 full blocks of 4 and 3 more
	partial := append(append([]int(nil), base[:10]...), ramp(90, 9)[1:]...)
	aligned := ramp(11, 24)
	for _, kt := range []quant.CacheType{quant.F32, quant.Q8_0} {
		t.Run(kt.String(), func(t *testing.T) {
			e, err := New(m, Config{BlockSize: 4, CacheBlocks: 64, Threads: 2, KType: kt, VType: kt})
			require.NoError(t, err)
			defer e.Close()
			sched := e.NewScheduler(SchedulerConfig{MaxBatchTokens: 9, ChunkSize: 5})
			score := func(p []int) Request { return Request{Prompt: p, PromptLogits: true, ScoreOnly: true} }
			for _, c := range []struct {
				name   string
				prompt []int
				hit    int
			}{
				{"miss", base, 0},
				{"full hit", base, 20},
				{"partial hit", partial, 8},
				{"aligned, hit", aligned, 20},
			} {
				cow := e.Pool().Stats().CowCopies
				rows, outs, hits := promptRun(t, sched, score(c.prompt))
				require.Empty(t, outs[0], c.name)
				require.Equal(t, c.hit, hits[0], c.name)
				requireRows(t, e, c.prompt, rows[0], c.name)
				require.Equal(t, cow, e.Pool().Stats().CowCopies, c.name)
			}
			// Generation after the rows, alongside a checked request over the same blocks.
			rows, outs, _ := promptRun(t, sched,
				Request{Prompt: base, PromptLogits: true, MaxTokens: 4, N: 2, Sampling: Sampling{Temperature: 0.8, Seed: 3}},
				Request{Prompt: append(append([]int(nil), base...), 7, 8), MaxTokens: 6, Check: true})
			requireRows(t, e, base, rows[0], "with generation")
			require.Len(t, outs[0], 4)
			require.Len(t, outs[1], 6)
			require.NoError(t, sched.Err(0))
		})
	}
}

// TestPromptLogitsOrderIndependent: overlapping prompts scored in two orders, on fresh
// pools, give the same rows bit for bit (a cache bug whose values depend on which request
// filled the blocks would differ).
func TestPromptLogitsOrderIndependent(t *testing.T) {
	m, err := microShape.Model()
	require.NoError(t, err)
	a := ramp(5, 19)
	b := append(append([]int(nil), a[:13]...), ramp(40, 6)[1:]...)
	run := func(first, second []int) map[string][]PromptRow {
		e, err := New(m, Config{BlockSize: 4, CacheBlocks: 32, Threads: 1})
		require.NoError(t, err)
		defer e.Close()
		sched := e.NewScheduler(SchedulerConfig{MaxBatchTokens: 7})
		out := map[string][]PromptRow{}
		for _, p := range [][]int{first, second} {
			rows, _, _ := promptRun(t, sched, Request{Prompt: p, PromptLogits: true, ScoreOnly: true})
			out[fmt.Sprint(p)] = rows[0]
			requireRows(t, e, p, rows[0], fmt.Sprint(p))
		}
		return out
	}
	ab, ba := run(a, b), run(b, a)
	for k, rows := range ab {
		for i := range rows {
			for j := range rows[i].Logits {
				require.Equal(t, math.Float32bits(rows[i].Logits[j]), math.Float32bits(ba[k][i].Logits[j]))
			}
		}
	}
}

// TestPromptLogitsChecked: with Check, a request's prompt rows come out, all at once, only
// after the cache-free reference has recomputed them bit for bit (a full prefix hit here),
// and they count as checked tokens.
func TestPromptLogitsChecked(t *testing.T) {
	m, err := microShape.Model()
	require.NoError(t, err)
	e, err := New(m, Config{BlockSize: 4, CacheBlocks: 32, Threads: 1})
	require.NoError(t, err)
	defer e.Close()
	sched := e.NewScheduler(SchedulerConfig{MaxBatchTokens: 6})
	p := ramp(9, 17)
	for round := range 2 { // a miss, then a full hit
		before := sched.Stats().CheckedTokens
		id, err := sched.Add(Request{Prompt: p, PromptLogits: true, ScoreOnly: true, Check: true})
		require.NoError(t, err)
		var rows []PromptRow
		deliveries := 0
		for !sched.Done() {
			_, err := sched.Step()
			require.NoError(t, err)
			if got := sched.PromptRows(); len(got) > 0 {
				deliveries++
				rows = append(rows, got...)
			}
		}
		require.NoError(t, sched.Err(id))
		require.Equal(t, 1, deliveries, "round %d: held until all are checked", round)
		requireRows(t, e, p, rows, "checked")
		require.Equal(t, int64(len(p)-1), sched.Stats().CheckedTokens-before)
	}
}
