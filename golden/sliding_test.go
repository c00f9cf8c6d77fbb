package golden

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// swaWindow and swaBlock size the sliding-window tests: a window of four blocks.
const swaWindow, swaBlock = 16, 4

// swaModel is a small Mistral-style synthetic model: every layer attends over a window of
// 16 positions.
var swaModel = &lazyModel{shape: synth.Shape{Name: "golden-swa", Dim: 32, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 64, Context: 512, RopeBase: 10000, Seed: 5, SlidingWindow: swaWindow}}

func swa(t testing.TB) *model.Model { return swaModel.get(t) }

func swaParams(t testing.TB) Params { return ParamsFor(swa(t), swaBlock, 48, 512) }

// swaGolden records (once per test binary) the named scenario of the sliding suite.
func swaGolden(t testing.TB, name string) *Golden {
	t.Helper()
	scs, _, err := Suite("sliding", swaParams(t))
	require.NoError(t, err)
	return recordOnce(t, swa(t), scs, name)
}

// promptLen is the length of a parts prompt: its parts after BOS.
func promptLen(r Request) int {
	n := 1
	for _, p := range r.Prompt.Parts {
		n += p.Length
	}
	return n
}

// TestSlidingSuiteNeedsAWindow: the sliding suite is refused, with what to do, for a model
// without a window and for a window shorter than two blocks; default never has its
// classes, full has them (at every type) only for a windowed model, and SuiteAt puts the
// sliding classes at the types asked for.
func TestSlidingSuiteNeedsAWindow(t *testing.T) {
	_, _, err := Suite("sliding", DefaultParams())
	require.True(t, errors.Is(err, ErrNoWindow), "%v", err)
	require.ErrorContains(t, err, "attends over every position")
	require.ErrorContains(t, err, "The sliding suite needs a model with a window (a model/synth Shape with SlidingWindow set is one); the default suite runs on any model")
	require.NotContains(t, err.Error(), "--", "a library error names no flag: kvref golden adds them")
	p := DefaultParams()
	p.Window, p.Reclaims = 24, true
	_, _, err = Suite("sliding", p)
	var short *WindowTooShortError
	require.ErrorAs(t, err, &short)
	require.Equal(t, WindowTooShortError{Window: 24, BlockSize: 16}, *short)
	require.Equal(t, 12, short.MaxBlockSize())
	require.ErrorContains(t, err, "the window (24 tokens) to span at least two blocks; the block size is 16 (Params.BlockSize), at most 12 works")

	p.Window = 64
	def, _, err := Suite("default", p)
	require.NoError(t, err)
	full, _, err := Suite("full", p)
	require.NoError(t, err)
	sliding, skipped, err := Suite("sliding", p)
	require.NoError(t, err)
	require.Empty(t, skipped)
	require.Len(t, sliding, len(slidingClasses), "one scenario per class, at f32")
	classes := map[string]int{}
	for _, s := range full {
		classes[s.Class]++
	}
	for _, s := range def {
		require.NotContains(t, []string{"window-crossing-block-boundary", "window-crossing-mid-block", "shared-prefix-slid-past", "preempt-after-reclaim"}, s.Class)
	}
	for _, s := range sliding {
		require.Equal(t, "f32", s.Cache.TypeK)
		require.Equal(t, len(quant.CacheTypes()), classes[s.Class], "%s is in full at every type", s.Class)
	}
	f16, _, err := SuiteAt("sliding", p, []quant.CacheType{quant.F16})
	require.NoError(t, err)
	require.Len(t, f16, len(slidingClasses))
	for _, s := range f16 {
		require.Equal(t, "f16", s.Cache.TypeK)
	}
}

// TestSlidingScenariosDoWhatTheySay builds the sliding suite over windows, block sizes,
// pools and contexts, and checks the geometry each class promises: the crossing classes'
// windows start at a block's first slot (or inside one) when decoding begins and slide over
// two more block boundaries; the holder of the shared prefix never leaves its window while
// the other sequence slides past the prefix during its prefill; the preemption class
// overfills the pool. What does not fit is skipped with a reason, and a model whose first
// layers attend over every position keeps only the masking classes.
func TestSlidingScenariosDoWhatTheySay(t *testing.T) {
	for _, p := range []Params{
		{BlockSize: 16, Blocks: 128, Context: 1024, Window: 64, Reclaims: true},
		{BlockSize: 4, Blocks: 48, Context: 512, Window: 16, Reclaims: true},
		{BlockSize: 8, Blocks: 64, Context: 512, Window: 20, Reclaims: true}, // W not a multiple of B
		{BlockSize: 2, Blocks: 16, Context: 128, Window: 4, Reclaims: true},
		{BlockSize: 16, Blocks: 128, Context: 32768, Window: 4096, Reclaims: true}, // Mistral 7B v0.1: a pool of 128 blocks is too small
		{BlockSize: 16, Blocks: 128, Context: 1024, Window: 64},                    // Qwen2 with max_window_layers
	} {
		scs, skipped, err := Suite("sliding", p)
		require.NoError(t, err, "%+v", p)
		for _, s := range skipped {
			require.NotEmpty(t, s.Reason, s.Name)
			if !p.Reclaims && (strings.HasPrefix(s.Name, "shared-prefix") || strings.HasPrefix(s.Name, "preempt")) {
				require.Contains(t, s.Reason, "max_window_layers")
			}
		}
		if p.Window == 4096 {
			require.Empty(t, scs)
			require.Contains(t, skipped[0].Reason, "blocks, the pool has 128")
			continue
		}
		w, b := p.Window, p.BlockSize
		for _, sc := range scs {
			require.NoError(t, sc.Validate())
			reqs := map[string]Request{}
			for _, r := range sc.Requests() {
				reqs[r.ID] = r
			}
			switch sc.Class {
			case "window-crossing-block-boundary", "window-crossing-mid-block":
				for _, id := range []string{"A", "B", "C"} {
					r, ok := reqs[id]
					if !ok {
						continue
					}
					edge := promptLen(r) - w // the last prompt token's window starts here
					require.GreaterOrEqual(t, edge, 0)
					require.Equal(t, sc.Class == "window-crossing-block-boundary", edge%b == 0, "%s %s: window starts at %d", sc.Name, id, edge)
					require.GreaterOrEqual(t, r.MaxTokens, 2*b, "the window crosses two more block boundaries while decoding")
				}
				require.Equal(t, p.Reclaims, sc.Expect.Reclaim, "recording requires a release where the model makes one")
				if sc.Class == "window-crossing-mid-block" {
					require.NotZero(t, sc.Cache.ChunkSize%b, "prefill chunks end mid-block")
				}
			case "shared-prefix-slid-past":
				h, a, e := reqs["H"], reqs["A"], reqs["E"]
				x := h.Prompt.Parts[0].Length + 1
				require.Equal(t, 0, x%b, "the shared prefix is whole blocks")
				for _, r := range []Request{h, e} {
					require.Less(t, promptLen(r)+r.MaxTokens-1, w+b-1, "%s never releases a block", r.ID)
				}
				require.GreaterOrEqual(t, promptLen(a)-w+1, x+b, "A's prefill slides past the shared prefix")
				require.True(t, sc.Expect.Reclaim)
			case "preempt-after-reclaim":
				var total int
				for _, r := range sc.Requests() {
					total += min(ceilDiv(promptLen(r)+r.MaxTokens, b), ceilDiv(w, b)+1)
				}
				require.Greater(t, total, p.Blocks, "the sequences' windows overfill the pool")
				require.True(t, sc.Expect.PreemptionAfterReclaim)
			}
		}
	}
}

// TestRecordSlidingSuite records the sliding suite on a model with a window of 16 and
// blocks of 4, bit for bit against the cache-free reference, and checks what each
// scenario exercised: blocks released, a preemption after a release, and which part of
// every prefix hit lies on blocks only a sliding window had released (optional for a
// candidate): all of the crossing classes' re-requests, none of the hits on the prefix
// the holder keeps, and the tail of F's.
func TestRecordSlidingSuite(t *testing.T) {
	scs, _, err := Suite("sliding", swaParams(t))
	require.NoError(t, err)
	require.Len(t, scs, 4)
	for _, sc := range scs {
		g := swaGolden(t, sc.Name)
		require.Equal(t, swaWindow, g.Model.SlidingWindow)
		require.Positive(t, g.Stats.BlocksReclaimed, sc.Name)
		byID := map[string]*GoldenRequest{}
		for i := range g.Requests {
			byID[g.Requests[i].ID] = &g.Requests[i]
		}
		switch sc.Class {
		case "window-crossing-block-boundary", "window-crossing-mid-block":
			for _, r := range g.Requests {
				if r.ExpectCache == ExpectHit {
					require.Positive(t, r.CachedTokens, r.ID)
					require.Equal(t, r.CachedTokens, r.ReclaimedTokens, "%s %s: its first reused block was released by A's window", sc.Name, r.ID)
				}
			}
		case "shared-prefix-slid-past":
			x := 2 * swaBlock // the window holds 4 blocks: X is 2
			for _, id := range []string{"A", "E"} {
				require.Equal(t, x, byID[id].CachedTokens, id)
				require.Zero(t, byID[id].ReclaimedTokens, "%s hit X while H held it", id)
			}
			f := byID["F"]
			require.Equal(t, x, f.CachedTokens-f.ReclaimedTokens, "X is firm: H and E released it by finishing")
			require.Positive(t, f.ReclaimedTokens, "A's later blocks were only released by its window")
		case "preempt-after-reclaim":
			require.Positive(t, g.Stats.Preemptions)
		}
	}
}

// TestSlidingCacheExpectations: kvref replayed with another block size passes; a
// candidate that recomputes every block a sliding window released (no hit where kvref's
// hit lies wholly on such blocks, only X for F) still passes, with notes; one that misses
// the prefix a live sequence holds is vacuous; a control run that reports hits fails.
func TestSlidingCacheExpectations(t *testing.T) {
	m := swa(t)
	names := []string{"window-crossing-block-boundary.f32", "window-crossing-mid-block.f32", "shared-prefix-slid-past.f32"}
	var goldens []*Golden
	for _, n := range names {
		goldens = append(goldens, swaGolden(t, n))
	}
	runner := model.NewRunner(m, 1)
	defer runner.Close()
	opt := VerifyOptions{Oracle: ModelOracle{Runner: runner}}
	replay := func(blockSize int) *Candidate {
		c := NewCandidate("kvref replay")
		for _, g := range goldens {
			cache := g.Scenario.Cache
			cache.BlockSize = blockSize
			cs, err := Replay(m, g, ReplayOptions{Cache: &cache, Threads: 1})
			require.NoError(t, err)
			c.Scenarios[g.Scenario.Name] = cs
		}
		return c
	}
	rep, err := Verify(goldens, replay(swaBlock), opt)
	require.NoError(t, err)
	require.True(t, rep.Passed)
	for _, s := range rep.Scenarios {
		require.Equal(t, s.ReclaimedHits, s.ObservedReclaimedHits, "kvref hits what it kept: %s", s.Name)
	}
	require.Equal(t, 2, rep.Scenarios[0].ReclaimedHits)
	require.Zero(t, rep.Scenarios[0].ExpectedHits, "R and S are optional, not expected")
	require.Equal(t, 3, rep.Scenarios[2].ExpectedHits)
	rep, err = Verify(goldens, replay(3), opt)
	require.NoError(t, err)
	require.True(t, rep.Passed, "another block size gives the same bits")

	// A candidate that drops what its window leaves: R, S and the mid-block R recompute, F
	// reuses only X.
	dropping := replay(swaBlock)
	zero, x := 0, 2*swaBlock
	for _, n := range names[:2] {
		for id, r := range dropping.Scenarios[n].Requests {
			if id == "R" || id == "S" {
				r.CachedTokens = &zero
			}
		}
	}
	dropping.Scenarios[names[2]].Requests["F"].CachedTokens = &x
	rep, err = Verify(goldens, dropping, opt)
	require.NoError(t, err)
	require.True(t, rep.Passed)
	require.Equal(t, 0, rep.Scenarios[0].ObservedReclaimedHits)
	require.Contains(t, strings.Join(rep.Scenarios[0].Notes, "\n"), "a hit on reclaimed blocks is optional")
	require.Contains(t, strings.Join(rep.Scenarios[2].Notes, "\n"), "request F: the candidate reused 8 prompt tokens (kvref), kvref 32")

	// E's prefix is held by H (or left cached by H's finish): missing it is vacuous.
	missing := replay(swaBlock)
	missing.Scenarios[names[2]].Requests["E"].CachedTokens = &zero
	rep, err = Verify(goldens[2:], missing, opt)
	require.NoError(t, err)
	require.Equal(t, StatusVacuous, rep.Scenarios[0].Status)
	require.Contains(t, rep.Scenarios[0].Vacuous[0], "request E expects a prefix-cache hit")

	// A control run reporting a hit on reclaimed blocks fails: the cache was not disabled.
	control := replay(swaBlock)
	control.Control = true
	rep, err = Verify(goldens[:1], control, opt)
	require.NoError(t, err)
	require.Equal(t, StatusFail, rep.Scenarios[0].Status)
	require.Equal(t, KindControl, rep.Scenarios[0].Failures[0].Kind)
}

// TestRecordFailsWhenNothingSlides: a scenario that expects released blocks fails to record
// on a model without a window, and one that expects a preemption after a release fails
// when its pool is large enough that nothing is preempted.
func TestRecordFailsWhenNothingSlides(t *testing.T) {
	scs, _, err := Suite("sliding", swaParams(t))
	require.NoError(t, err)
	var shared, preempt *Scenario
	for _, sc := range scs {
		switch sc.Class {
		case "shared-prefix-slid-past":
			shared = sc
		case "preempt-after-reclaim":
			preempt = sc
		}
	}
	m := tiny(t)
	_, err = Record(m, tinyInfo(m), shared, RecordOptions{Threads: 1})
	require.ErrorContains(t, err, "expects blocks released by a sliding window, but the model has no sliding window")

	big := *preempt
	big.Cache.Blocks = 4096
	big.Expect.Preemption = false
	s := swa(t)
	_, err = Record(s, tinyInfo(s), &big, RecordOptions{Threads: 1})
	require.ErrorContains(t, err, "expects a sequence preempted after it released blocks it slid past, but kvref's own run had 0 preemptions")
}

// TestHitTrackerFollowsTheLastRelease: a block is optional for a candidate only while the
// last reference dropped was a Reclaim; a later Free by another holder, or the block still
// held, makes it firm, and the first optional block ends the firm part of a hit.
func TestHitTrackerFollowsTheLastRelease(t *testing.T) {
	tr := newHitTracker()
	ev := func(kind kvcache.EventKind, seq, block, ref int) {
		tr.observe(kvcache.Event{Kind: kind, Seq: seq, Block: block, Ref: ref, Index: -1, From: -1})
	}
	ev(kvcache.Allocated, 0, 10, 1)
	ev(kvcache.Allocated, 0, 11, 1)
	ev(kvcache.Allocated, 0, 12, 1)
	ev(kvcache.PrefixHit, 1, 10, 2) // sequence 1 shares block 10
	ev(kvcache.Reclaimed, 0, 10, 1) // 0 slides past 10 and 11; 1 still holds 10
	ev(kvcache.Reclaimed, 0, 11, 0)
	ev(kvcache.Released, 1, 10, 0) // 1 finishes: 10 was last released by a Free
	ev(kvcache.Released, 0, 12, 0)
	tr.startStep()
	ev(kvcache.PrefixHit, 2, 10, 1) // firm
	ev(kvcache.PrefixHit, 2, 11, 1) // only released by a window: optional from here on
	ev(kvcache.PrefixHit, 2, 12, 1) // freed by a Free, but after the break in the chain
	ev(kvcache.PrefixHit, 3, 11, 2) // held by 2 now: firm for 3
	firm, err := tr.firmTokens(3*4, 4)
	require.NoError(t, err)
	require.Equal(t, 4, firm)
	firm, err = tr.firmTokens(4, 4)
	require.NoError(t, err)
	require.Equal(t, 4, firm)
	_, err = tr.firmTokens(8, 4)
	require.ErrorContains(t, err, "no sequence added in this step reused the 8 tokens")
}

// TestSlidingSuiteCountsEveryGroupsTable: on Gemma's layout every cache group holds its own
// table, so the sliding crossings need about FullGroups·all + SlidingGroups·window blocks
// per sequence. A pool that holds one table's worth skips them with the blocks they need;
// a pool that holds every table records them, and each recording's expected prefix hits
// (R and S reusing what the sliding groups released) happen in kvref's own run.
func TestSlidingSuiteCountsEveryGroupsTable(t *testing.T) {
	t.Parallel()
	names := []string{"window-crossing-block-boundary.f32", "window-crossing-mid-block.f32"}
	small := ParamsFor(hybrid(t), 8, 64, 512)
	require.Equal(t, 6, small.FullGroups+small.SlidingGroups)
	_, skipped, err := Suite("sliding", small)
	require.NoError(t, err)
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Name] = s.Reason
	}
	for _, name := range names {
		require.Contains(t, reasons[name], "blocks, the pool has 64", "%s: %v", name, skipped)
	}
	big := ParamsFor(hybrid(t), 8, 512, 512)
	scs, skipped, err := Suite("sliding", big)
	require.NoError(t, err)
	for _, s := range skipped {
		require.NotContains(t, names, s.Name, s.Reason)
	}
	for _, name := range names {
		g := recordOnce(t, hybrid(t), scs, name)
		require.Positive(t, g.Stats.PrefixHitTokens, name)
	}
}
