package golden

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
)

// hybridModel is a small Gemma-3-shaped synthetic model: 12 layers, every sixth global, so
// 10 sliding layers (window 24) and 2 global ones: 5 sliding cache groups and 1 full one
// of 2 layers each.
var hybridModel = &lazyModel{shape: synth.Shape{Name: "golden-hybrid", Arch: "gemma3", Dim: 32, Layers: 12, Heads: 2, KVHeads: 1, HeadDim: 16,
	Hidden: 48, Context: 512, RopeBase: 1e6, Seed: 7, SlidingWindow: 24}}

func hybrid(t testing.TB) *model.Model { return hybridModel.get(t) }

func hybridParams(t testing.TB) Params { return ParamsFor(hybrid(t), 8, 192, 512) }

// TestHybridSuiteNeedsGroups: the hybrid suite is refused, with what to do, for a model
// whose layers all attend alike (with or without a window); for Gemma's layout it has
// every class, none skipped, and full includes them.
func TestHybridSuiteNeedsGroups(t *testing.T) {
	_, _, err := Suite("hybrid", swaParams(t))
	require.True(t, errors.Is(err, ErrNoGroups), "%v", err)
	require.ErrorContains(t, err, "kvref synth --arch gemma3")
	_, _, err = Suite("hybrid", DefaultParams())
	require.True(t, errors.Is(err, ErrNoGroups))

	p := hybridParams(t)
	require.Equal(t, 1, p.FullGroups)
	require.Equal(t, 5, p.SlidingGroups)
	scs, skipped, err := Suite("hybrid", p)
	require.NoError(t, err)
	require.Empty(t, skipped)
	require.Len(t, scs, len(hybridClasses))
	full, _, err := Suite("full", p)
	require.NoError(t, err)
	n := 0
	for _, sc := range full {
		if strings.HasPrefix(sc.Name, "hybrid-") {
			n++
		}
	}
	require.GreaterOrEqual(t, n, len(hybridClasses), "full has every hybrid class (at every cache type it can)")
	for _, s := range []string{"default", "sliding"} {
		d, _, err := Suite(s, p)
		require.NoError(t, err)
		for _, sc := range d {
			require.False(t, strings.HasPrefix(sc.Name, "hybrid-"), "%s has %s", s, sc.Name)
		}
	}
}

// TestHybridSuiteRecordsAndReplays records every hybrid scenario on the Gemma-3-shaped
// model (each recording checks every step bit for bit against the cache-free reference and
// that kvref's own run showed what the scenario claims: releases, evictions only in the
// sliding groups, a hit shortened by evicted sliding blocks, preemption after a release),
// then verifies kvref replayed at the same and at another block size: every scenario
// passes, except that at the other block size the two classes sized to the recorded pool
// may be vacuous (other blocks evicted), never failed: the outputs are the same bits.
func TestHybridSuiteRecordsAndReplays(t *testing.T) {
	m := hybrid(t)
	scs, _, err := Suite("hybrid", hybridParams(t))
	require.NoError(t, err)
	var goldens []*Golden
	for _, sc := range scs {
		g := recordOnce(t, m, scs, sc.Name)
		goldens = append(goldens, g)
		require.Positive(t, g.Stats.BlocksReclaimed, sc.Name)
		switch sc.Class {
		case "hybrid-hit-shortened":
			b := g.Request("B")
			require.Equal(t, 4*8, b.CachedTokens, "B hits A2's 4 blocks, not the 6 its full groups hold")
			require.Equal(t, 4*8, g.Request("A2").CachedTokens)
		case "hybrid-hit-longer-than-window":
			require.Greater(t, g.Request("B").CachedTokens, 2*24)
		case "hybrid-preempt-across-window":
			require.Positive(t, g.Stats.Preemptions)
		}
	}
	runner := model.NewRunner(m, 1)
	defer runner.Close()
	opt := VerifyOptions{Oracle: ModelOracle{Runner: runner}}
	for _, bs := range []int{8, 4} {
		c := NewCandidate("kvref replay")
		for _, g := range goldens {
			cache := g.Scenario.Cache
			cache.BlockSize = bs
			cache.Blocks = g.Scenario.Cache.Blocks * 8 / bs
			cs, err := Replay(m, g, ReplayOptions{Cache: &cache, Threads: 1})
			require.NoError(t, err)
			c.Scenarios[g.Scenario.Name] = cs
		}
		rep, err := Verify(goldens, c, opt)
		require.NoError(t, err)
		for _, s := range rep.Scenarios {
			if bs != 8 && (strings.HasPrefix(s.Name, "hybrid-eviction-in-one-group") || strings.HasPrefix(s.Name, "hybrid-hit-shortened")) {
				// Their fillers are sized to kvref's pool at the recorded block size: at
				// another, other blocks are evicted and an expected hit may miss.
				require.Contains(t, []Status{StatusPass, StatusVacuous}, s.Status, "block size %d: %s: %v", bs, s.Name, s.Failures)
				continue
			}
			require.Equal(t, StatusPass, s.Status, "block size %d: %s: %v %v", bs, s.Name, s.Failures, s.Vacuous)
		}
	}
}

// TestHybridOptionalAndFirmHits: the outcome rules per group. A hit whose sliding-group
// blocks a window had released is optional: a candidate that recomputes it (reports 0
// cached tokens) still passes, with a note. A hit every group's blocks of which were held
// or freed by a finishing sequence is firm: a candidate that misses it is vacuous.
func TestHybridOptionalAndFirmHits(t *testing.T) {
	m := hybrid(t)
	scs, _, err := Suite("hybrid", hybridParams(t))
	require.NoError(t, err)
	longer := recordOnce(t, m, scs, "hybrid-hit-longer-than-window.f32")
	evict := recordOnce(t, m, scs, "hybrid-eviction-in-one-group.f32")
	b, r := longer.Request("B"), evict.Request("R")
	require.Equal(t, b.CachedTokens, b.ReclaimedTokens, "B's sliding blocks were released by A's window: all optional")
	require.Positive(t, r.CachedTokens)
	require.Zero(t, r.ReclaimedTokens, "R's blocks were all freed by A's end: firm")

	runner := model.NewRunner(m, 1)
	defer runner.Close()
	opt := VerifyOptions{Oracle: ModelOracle{Runner: runner}}
	c := NewCandidate("kvref replay, then edited")
	for _, g := range []*Golden{longer, evict} {
		cs, err := Replay(m, g, ReplayOptions{Threads: 1})
		require.NoError(t, err)
		c.Scenarios[g.Scenario.Name] = cs
	}
	zero := 0
	c.Scenarios[longer.Scenario.Name].Requests["B"].CachedTokens = &zero
	c.Scenarios[evict.Scenario.Name].Requests["R"].CachedTokens = &zero
	rep, err := Verify([]*Golden{longer, evict}, c, opt)
	require.NoError(t, err)
	require.Equal(t, StatusPass, rep.Scenarios[0].Status, "%v", rep.Scenarios[0].Vacuous)
	require.Contains(t, strings.Join(rep.Scenarios[0].Notes, "\n"), "request B")
	require.Equal(t, StatusVacuous, rep.Scenarios[1].Status)
	require.Contains(t, rep.Scenarios[1].Vacuous[0], "request R expects a prefix-cache hit")
}
