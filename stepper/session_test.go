package stepper

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// tinyModel is the synthetic tiny model (random weights, small vocabulary).
func tinyModel(t testing.TB) *model.Model {
	t.Helper()
	m, err := synth.Tiny.Model()
	require.NoError(t, err)
	return m
}

// newSession starts a session on m that ends with the test.
func newSession(t testing.TB, m *model.Model, cfg engine.Config, sampling engine.Sampling, check bool) *Session {
	t.Helper()
	s, err := New(m, cfg, Options{Sampling: sampling, Check: check})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// TestSessionWalk is the tutorial's walk through the library API: a prompt, decode steps
// across a block boundary, a fork whose first write copies on write, a second prompt with
// a prefix hit, and an eviction under a small pool. Every record agrees with the pool.
func TestSessionWalk(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	s := newSession(t, m, engine.Config{Threads: 1, BlockSize: 4, CacheBlocks: 6, KType: quant.F32, VType: quant.F32},
		engine.Sampling{Temperature: 0}, true) // greedy, every step checked bitwise
	e := s.Engine()

	prompt := []int{1, 10, 11, 12, 13, 14} // six tokens: a full block and half of another
	a, err := s.Add(prompt)
	require.NoError(t, err)
	require.Zero(t, a.Hit)
	q := a.Seq
	require.Equal(t, 6, q.KV.Computed())
	require.Len(t, q.Logits, m.Config.Vocab)

	// Two decode steps fill the second block (pos 6, 7), the third needs a new block.
	for i := range 3 {
		d, err := s.Decode(q, -1, 3)
		require.NoError(t, err)
		require.Equal(t, 6+i, d.Pos)
		require.Equal(t, "greedy", d.How)
		require.Equal(t, 1, d.Rank, "greedy picks the top token")
		require.Equal(t, d.Token, d.Top[0])
		block, slot := q.KV.Slot(d.Pos)
		require.Equal(t, [2]int{block, slot}, [2]int{d.Block, d.Slot})
		if d.Pos == 8 {
			require.Equal(t, []int{d.Block}, d.Cache.New, "pos 8 starts block 2")
		} else {
			require.True(t, d.Cache.Empty(), "pos %d lands in a block the sequence has", d.Pos)
		}
	}

	// A fork shares all three blocks; its first token goes to slot 1 of the shared third
	// block: copy-on-write of one slot.
	f := s.Fork(q)
	require.Len(t, f.Events, 3)
	require.Equal(t, q.KV.Table(), f.Seq.KV.Table())
	require.Equal(t, q.ID(), f.Seq.Parent)
	d, err := s.Decode(f.Seq, 42, 0)
	require.NoError(t, err)
	require.Equal(t, "picked", d.How)
	require.Equal(t, 42, d.Token)
	require.Len(t, d.Cache.Copies, 1)
	require.Equal(t, q.KV.Table()[2], d.Cache.Copies[0].From)
	require.Equal(t, 1, d.Cache.Copies[0].Slots)

	// A new prompt sharing the first block of q: a prefix hit.
	b, err := s.Add(append(slices.Clone(prompt[:4]), 20, 21))
	require.NoError(t, err)
	require.Equal(t, 4, b.Hit)
	require.Equal(t, kvcache.PrefixHit, b.Events[0].Kind)
	require.Equal(t, q.KV.Table()[0], b.Events[0].Block)

	// The pool (6 blocks) now holds q [3], f [2 shared + 1], b [1 shared + 1]: 5 in use.
	require.Equal(t, 5, e.Pool().Stats().BlocksUsed)
	owners := s.Owners()
	require.Len(t, owners[q.KV.Table()[0]], 3, "block 0 is held by q, f and b")

	// Free f and b: their private partial blocks go free, nothing full is left unowned.
	freed := s.Free(f.Seq)
	require.Equal(t, 3, len(freed.Table))
	s.Free(b.Seq)
	require.Len(t, s.Live(), 1)
	require.NoError(t, e.Pool().Check())

	// Out of blocks leaves everything as it was.
	_, err = s.Add(make([]int, 30))
	require.ErrorIs(t, err, kvcache.ErrOutOfBlocks)
	require.Len(t, s.Live(), 1)
	require.NoError(t, e.Pool().Check())
}

// TestSessionAttentionAndTemperature: a decode step records the chosen layer's weights per
// head, each a distribution over positions 0..pos; changing the temperature reseeds every
// sampler the same way on replay.
func TestSessionAttentionAndTemperature(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	run := func() []int {
		s := newSession(t, m, engine.Config{Threads: 1, BlockSize: 4, KType: quant.F32, VType: quant.F32}, engine.Sampling{Temperature: 0.9, Seed: 3}, false)
		a, err := s.Add([]int{1, 2, 3})
		require.NoError(t, err)
		s.SetAttention(AttentionChoice{Layer: 1, Head: -1})
		var toks []int
		for i := range 6 {
			if i == 3 {
				s.SetTemperature(1.3)
			}
			d, err := s.Decode(a.Seq, -1, 0)
			require.NoError(t, err)
			toks = append(toks, d.Token)
			require.Len(t, d.Attention, m.Config.Heads)
			for _, w := range d.Attention {
				require.Len(t, w, d.Pos+1)
				sum := 0.0
				for _, v := range w {
					sum += float64(v)
				}
				require.InDelta(t, 1, sum, 1e-5)
			}
			require.Len(t, d.MeanAttention(), d.Pos+1)
		}
		return toks
	}
	require.Equal(t, run(), run(), "a session replays exactly")
}

// TestSessionSetSeed: after SetSeed(S), a session samples exactly what a session started
// with seed S samples, for sequences that were live at the change and for later ones; and a
// different seed gives a different stream.
func TestSessionSetSeed(t *testing.T) {
	t.Parallel()

	m := tinyModel(t)
	sample := func(start uint64, change bool) []int {
		s := newSession(t, m, engine.Config{Threads: 1, BlockSize: 4, KType: quant.F32, VType: quant.F32}, engine.Sampling{Temperature: 1.5, Seed: start}, false)
		a, err := s.Add([]int{1, 2, 3})
		require.NoError(t, err)
		if change {
			s.SetSeed(9)
		}
		b, err := s.Add([]int{1, 5})
		require.NoError(t, err)
		var toks []int
		for range 12 {
			for _, q := range []*Seq{a.Seq, b.Seq} {
				d, err := s.Decode(q, -1, 0)
				require.NoError(t, err)
				toks = append(toks, d.Token)
			}
		}
		if change {
			require.Equal(t, uint64(9), s.Sampling().Seed, "the session reports the seed it samples with")
		}
		return toks
	}
	want := sample(9, false)
	require.Equal(t, want, sample(4, true), "SetSeed(9) on a seed-4 session samples as a seed-9 session")
	require.NotEqual(t, want, sample(4, false), "another seed, another stream")
}
