package stepper

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/quant"
)

// state is everything undo must restore: the pool (blocks, tables, statistics), the live
// sequences with their logits and seeds, the settings and the whole event log.
type state struct {
	Snap     kvcache.Snapshot
	Seqs     []seqState
	Events   []kvcache.Event
	Sampling engine.Sampling
	Attn     AttentionChoice
	Config   engine.Config
}

type seqState struct {
	ID, Prompt, Parent int
	Seed, Reseeds      uint64
	Tokens             []int
	Logits             []float32
}

func capture(s *Session) state {
	st := state{Snap: s.Engine().Pool().Snapshot(), Events: slices.Clone(s.Events()), Sampling: s.Sampling(),
		Attn: s.Attention(), Config: s.Config()}
	for _, q := range s.Live() {
		st.Seqs = append(st.Seqs, seqState{ID: q.ID(), Prompt: q.Prompt, Parent: q.Parent, Seed: q.Seed, Reseeds: q.reseeds,
			Tokens: slices.Clone(q.KV.Tokens()), Logits: slices.Clone(q.Logits)})
	}
	return st
}

// tokens lists the tokens a result decoded.
func tokens(r Result) []int {
	var out []int
	for _, d := range r.Decoded {
		out = append(out, d.Token)
	}
	return out
}

// TestUndoRestoresEverything runs 40 commands of every kind (add, decode, pick, fork,
// free, temperature, seed, attention, a pool reset, and a decode that runs out of blocks
// part-way), sampling at a temperature, with every step checked; then undoes all 40, one by
// one. After each undo the state equals the snapshot taken before the command, and running
// the command again gives the same result as the first time (the same sampled tokens, the
// same events); that redo is undone too. Checked steps still pass after every undo.
func TestUndoRestoresEverything(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	s := newSession(t, m, engine.Config{Threads: 1, BlockSize: 4, CacheBlocks: 12, KType: quant.F16, VType: quant.F16},
		engine.Sampling{Temperature: 0.9, TopK: 20, Seed: 7}, true)
	f := func(v float64) *float64 { return &v }
	u := func(v uint64) *uint64 { return &v }
	i := func(v int) *int { return &v }
	prompt := func(n, first int) string {
		var b []byte
		for k := range n {
			b = append(b, byte('a'+(first+k)%26))
		}
		return string(b)
	}
	cmds := []Command{
		{Op: "add", Text: prompt(6, 0)},
		{Op: "decode", Seq: 0, N: 3},
		{Op: "fork", Seq: 0},
		{Op: "decode", Seq: 1, N: 1}, // copy-on-write of the shared block
		{Op: "decode", Seq: 0, N: 2},
		{Op: "temperature", Temperature: f(1.3)},
		{Op: "decode", Seq: 1, N: 4},
		{Op: "decode", Seq: 0, Token: i(5)}, // pick
		{Op: "add", Text: prompt(6, 0)},     // a prefix hit on seq 0's first block
		{Op: "seed", Seed: u(11)},
		{Op: "decode", Seq: 2, N: 2},
		{Op: "attention", Layer: i(1), Head: i(-1)},
		{Op: "decode", Seq: 2, N: 1},
		{Op: "free", Seq: 0},
		{Op: "fork", Seq: 2},
		{Op: "decode", Seq: 3, N: 3},
		{Op: "free", Seq: 1},
		{Op: "add", Text: prompt(9, 3)},
		{Op: "decode", Seq: 4, N: 40}, // runs out of blocks part-way: stopped, its steps kept
		{Op: "free", Seq: 2},
		{Op: "decode", Seq: 3, N: 2},
		{Op: "add", Text: prompt(6, 0)}, // evicted blocks must be computed again
		{Op: "temperature", Temperature: f(0)},
		{Op: "decode", Seq: 5, N: 2},
		{Op: "reset", Blocks: 10},
		{Op: "add", Text: prompt(7, 1)},
		{Op: "decode", Seq: 0, N: 2},
		{Op: "temperature", Temperature: f(0.7)},
		{Op: "fork", Seq: 0},
		{Op: "decode", Seq: 1, N: 3},
		{Op: "decode", Seq: 0, N: 1},
		{Op: "fork", Seq: 1},
		{Op: "decode", Seq: 2, Token: i(9)},
		{Op: "free", Seq: 1},
		{Op: "decode", Seq: 2, N: 2},
		{Op: "add", Text: prompt(7, 1)},
		{Op: "decode", Seq: 3, N: 1},
		{Op: "attention", Layer: i(-1)},
		{Op: "free", Seq: 0},
		{Op: "decode", Seq: 3, N: 2},
	}
	require.GreaterOrEqual(t, len(cmds), 32)
	before := make([]state, len(cmds))
	results := make([]Result, len(cmds))
	stopped := false
	for k, c := range cmds {
		before[k] = capture(s)
		r, err := s.Do(c)
		require.NoError(t, err, "command %d %+v", k, c)
		results[k] = r
		stopped = stopped || r.Stopped != nil
		require.NoError(t, s.Engine().Pool().Check())
	}
	require.True(t, stopped, "one decode ran out of blocks part-way")
	require.Equal(t, len(cmds), s.Undoable())
	for k := len(cmds) - 1; k >= 0; k-- {
		require.NoError(t, s.Undo(), "undo %d", k)
		require.Equal(t, before[k], capture(s), "after undoing command %d %+v", k, cmds[k])
		require.NoError(t, s.Engine().Pool().Check())
		// Again: the same tokens, checked again bit for bit, and the same events.
		r, err := s.Do(cmds[k])
		require.NoError(t, err, "redo %d", k)
		require.Equal(t, tokens(results[k]), tokens(r), "command %d samples the same tokens after an undo", k)
		for j, d := range r.Decoded {
			require.NotNil(t, d.Check, "command %d step %d is checked", k, j)
			require.Zero(t, d.Check.MaxAbsDiff)
			require.Equal(t, results[k].Decoded[j].Events, d.Events)
		}
		require.NoError(t, s.Undo())
		require.Equal(t, before[k], capture(s), "after undoing the redo of command %d", k)
	}
	require.Zero(t, s.Undoable())
	require.ErrorIs(t, s.Undo(), ErrNothingToUndo)
}

// TestDoRefusesAndChangesNothing: a command Do refuses leaves no history entry.
func TestDoRefusesAndChangesNothing(t *testing.T) {
	t.Parallel()

	s := newSession(t, tinyModel(t), engine.Config{Threads: 1, BlockSize: 4, CacheBlocks: 4, KType: quant.F32, VType: quant.F32}, engine.Sampling{}, false)
	for _, c := range []struct {
		cmd  Command
		want string
	}{
		{Command{}, `has no "op"; ops are decode, fork, free, add, temperature, seed, attention, reset, undo`},
		{Command{Op: "fly"}, `unknown op "fly"`},
		{Command{Op: "switch", Seq: 0}, `unknown op "switch"`},
		{Command{Op: "decode", Seq: 0}, "there are none; add a prompt first"},
		{Command{Op: "undo"}, "nothing to undo"},
		{Command{Op: "add", Text: "abcdefghijklmnopqrstuvwxyz"}, "out of blocks"},
	} {
		_, err := s.Do(c.cmd)
		require.ErrorContains(t, err, c.want, "%+v", c.cmd)
		require.Zero(t, s.Undoable())
		require.Empty(t, s.Live())
	}
}
