package engine

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/kvref/kvref/engine/oracle"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// microShape is a model small enough to run thousands of random traces in seconds, with GQA.
// Its heads are 4 wide and its K/V rows 8: the kernels' eight-lane loops never run (only
// their tails), and q8_0, whose blocks of 32 span the row, cannot store it.
var microShape = synth.Shape{Name: "micro", Dim: 16, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 24, Context: 512, RopeBase: 10000, Seed: 3}

// smallShape has real head shapes at a small size: heads of 16 (two full lanes of eight)
// and K/V rows of 32, so every cache type stores it, q8_0 with one block per row spanning
// both KV heads.
var smallShape = synth.Shape{Name: "small", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 96, Context: 512, RopeBase: 10000, Seed: 4}

// traceRunner drives one engine through a trace of cache operations and checks, after
// every operation, the pool's invariants and that every logit vector the cache produced is
// bit-identical to the cache-free reference of that sequence's tokens.
type traceRunner struct {
	t       require.TestingT
	e       *Engine
	live    []*kvcache.Sequence
	prompts [][]int // every prompt added so far, for re-adds and shared prefixes
	steps   int
	batched int // steps in which a sequence ran at least batchedPrefill new tokens
}

// batchedPrefill is the run of new positions of one sequence at which attention takes the
// batched prefill path (attention's batchedMin).
const batchedPrefill = 8

func newTraceRunner(t require.TestingT, m *model.Model, blockSize, blocks int, ct quant.CacheType) *traceRunner {
	e, err := New(m, Config{BlockSize: blockSize, CacheBlocks: blocks, Threads: 1, KType: ct, VType: ct})
	require.NoError(t, err)
	return &traceRunner{t: t, e: e}
}

func (r *traceRunner) close() { r.e.Close() }

// run computes the given sequences in one batched step and checks every logit vector. A
// step the pool cannot hold frees its sequences (what a scheduler's preemption would do).
func (r *traceRunner) run(seqs ...*kvcache.Sequence) {
	long := false
	for _, s := range seqs {
		long = long || s.Len()-s.Computed() >= batchedPrefill
	}
	logits, err := r.e.Step(seqs)
	if errors.Is(err, kvcache.ErrOutOfBlocks) {
		for _, s := range seqs {
			r.free(s)
		}
		r.check()
		return
	}
	require.NoError(r.t, err)
	r.steps++
	if long {
		r.batched++
	}
	cfg := r.e.pool.Config()
	for i, s := range seqs {
		ref, err := r.e.runner.Reference(s.Tokens(), cfg.KType, cfg.VType, s.Len()-1)
		require.NoError(r.t, err)
		for j := range ref[0] {
			if math.Float32bits(ref[0][j]) != math.Float32bits(logits[i][j]) {
				require.Fail(r.t, "cached logits differ from the reference",
					"sequence %d (%d tokens, %d from prefix hits) logit %d: cached %v reference %v", s.ID(), s.Len(), 0, j, logits[i][j], ref[0][j])
			}
		}
	}
	r.check()
}

func (r *traceRunner) check() { require.NoError(r.t, r.e.pool.Check()) }

func (r *traceRunner) add(prompt []int) *kvcache.Sequence {
	s, _ := r.addHit(prompt)
	return s
}

// addHit is add, and also returns the prompt tokens the new sequence reused from the cache
// (its Computed() when added, before its first step).
func (r *traceRunner) addHit(prompt []int) (*kvcache.Sequence, int) {
	s := r.e.pool.AddSequence(prompt, "")
	hit := s.Computed()
	r.prompts = append(r.prompts, prompt)
	r.live = append(r.live, s)
	r.check()
	r.run(s)
	return s, hit
}

func (r *traceRunner) appendTokens(s *kvcache.Sequence, tokens ...int) {
	s.Append(tokens...)
	r.run(s)
}

func (r *traceRunner) fork(s *kvcache.Sequence) *kvcache.Sequence {
	f := r.e.pool.Fork(s)
	r.live = append(r.live, f)
	r.check()
	return f
}

func (r *traceRunner) free(s *kvcache.Sequence) {
	r.e.pool.Free(s)
	for i, l := range r.live {
		if l == s {
			r.live = append(r.live[:i], r.live[i+1:]...)
			break
		}
	}
	r.check()
}

// TestCacheTracesProperty generates random traces — prompts sharing prefixes with lengths
// near multiples of the block size, long prompts and long appends (batched prefill),
// appends, forks, batched steps, frees, re-adds of freed prompts, in pools small enough to
// evict — on two shapes (micro; small, whose heads fill the eight-lane loops and whose rows
// q8_0 can store), at block sizes 1, 2, 16 and 64 and for every cache type the shape
// allows, and checks invariants and bitwise logits after every operation. Failing traces
// shrink to a minimal one. At the end of each trace the oracle (engine/oracle) checks what
// the newest live sequence stored, with decoders independent of the codecs. Afterwards it requires that every cache type was drawn and that
// batched prefill ran at every block size, so that the traces cover what they claim.
func TestCacheTracesProperty(t *testing.T) {
	t.Parallel()

	// 300 traces per block size; under -short (the quick run, and CI's race and portable-
	// kernel passes) rapid runs a fifth of them, 60.
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == "100" {
		require.NoError(t, flag.Set("rapid.checks", "300"))
	}
	for _, shape := range []synth.Shape{microShape, smallShape} {
		m, err := shape.Model()
		require.NoError(t, err)
		types := propertyCacheTypes(m)
		if shape.Name == smallShape.Name {
			require.Len(t, types, len(quant.CacheTypes()), "the small shape must take every cache type")
		}
		drawn := map[quant.CacheType]int{}
		for _, bs := range []int{1, 2, 16, 64} {
			t.Run(fmt.Sprintf("%s/block%d", shape.Name, bs), func(t *testing.T) {
				batched := 0
				rapid.Check(t, func(rt *rapid.T) {
					ct := rapid.SampledFrom(types).Draw(rt, "cacheType")
					drawn[ct]++
					r := runTrace(rt, m, bs, ct)
					batched += r.batched
				})
				require.Positive(t, batched, "no trace ran a batched prefill at block size %d", bs)
			})
		}
		for _, ct := range types {
			require.Positive(t, drawn[ct], "%s: no trace used the %v cache", shape.Name, ct)
		}
	}
}

// runTrace draws and runs one trace on a fresh engine and frees everything at the end.
func runTrace(rt *rapid.T, m *model.Model, bs int, ct quant.CacheType) *traceRunner {
	// Between 2 and 3 sequences' worth of a typical prompt: eviction happens.
	blocks := rapid.IntRange(max(3, 96/bs), max(6, 240/bs)).Draw(rt, "blocks")
	r := newTraceRunner(rt, m, bs, blocks, ct)
	defer r.close()
	token := rapid.IntRange(3, m.Config.Vocab-1)
	tokens := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = token.Draw(rt, "t")
		}
		return out
	}
	nOps := rapid.IntRange(1, 14).Draw(rt, "ops")
	for op := 0; op < nOps; op++ {
		switch rapid.IntRange(0, 8).Draw(rt, "op") {
		case 0, 1: // add a prompt, often sharing a prefix with an earlier one
			var prompt []int
			if len(r.prompts) > 0 && rapid.Bool().Draw(rt, "share") {
				base := rapid.SampledFrom(r.prompts).Draw(rt, "base")
				k := rapid.IntRange(1, len(base)).Draw(rt, "shared")
				prompt = append(prompt, base[:k]...)
			} else {
				prompt = []int{1}
			}
			target := bs*rapid.IntRange(0, 3).Draw(rt, "blocksLong") + rapid.IntRange(-1, 1).Draw(rt, "jitter")
			if len(prompt) < target {
				prompt = append(prompt, tokens(target-len(prompt))...)
			}
			r.add(prompt)
		case 2: // append tokens to one sequence
			if len(r.live) > 0 {
				s := rapid.SampledFrom(r.live).Draw(rt, "seq")
				r.appendTokens(s, tokens(rapid.IntRange(1, 3).Draw(rt, "n"))...)
			}
		case 3: // fork, then write into the fork (copy-on-write)
			if len(r.live) > 0 {
				f := r.fork(rapid.SampledFrom(r.live).Draw(rt, "parent"))
				r.appendTokens(f, token.Draw(rt, "t"))
			}
		case 4: // one batched decode step of every live sequence
			batch := append([]*kvcache.Sequence(nil), r.live...)
			for _, s := range batch {
				s.Append(token.Draw(rt, "t"))
			}
			if len(batch) > 0 {
				r.run(batch...)
			}
		case 5: // free a sequence: its full blocks stay cached
			if len(r.live) > 0 {
				r.free(rapid.SampledFrom(r.live).Draw(rt, "victim"))
			}
		case 6: // re-add an earlier prompt exactly
			if len(r.prompts) > 0 {
				r.add(append([]int(nil), rapid.SampledFrom(r.prompts).Draw(rt, "again")...))
			}
		case 7: // a long prompt (batched prefill), sharing a prefix or not
			prompt := []int{1}
			if len(r.prompts) > 0 && rapid.Bool().Draw(rt, "shareLong") {
				base := rapid.SampledFrom(r.prompts).Draw(rt, "baseLong")
				prompt = append([]int(nil), base[:rapid.IntRange(1, len(base)).Draw(rt, "sharedLong")]...)
			}
			n := rapid.IntRange(batchedPrefill, 80).Draw(rt, "longPrompt")
			r.add(append(prompt, tokens(n)...))
		case 8: // a long append to one sequence: a prefill chunk from mid-sequence
			if len(r.live) > 0 {
				s := rapid.SampledFrom(r.live).Draw(rt, "seqLong")
				r.appendTokens(s, tokens(rapid.IntRange(batchedPrefill, 24).Draw(rt, "nLong"))...)
			}
		}
	}
	// The oracle reads what the newest live sequence stored with its own decoders: each
	// element within its format's bound of the exact value, attention within bounds.
	if len(r.live) > 0 {
		s := r.live[len(r.live)-1]
		_, err := oracle.Check(r.e.runner, r.e.pool, s)
		require.NoError(rt, err, "sequence %d", s.ID())
	}
	for _, s := range append([]*kvcache.Sequence(nil), r.live...) {
		r.free(s)
	}
	st := r.e.pool.Stats()
	require.Zero(rt, st.BlocksUsed)
	require.Equal(rt, st.BlocksTotal, st.BlocksFree+st.BlocksCached)
	return r
}

// propertyCacheTypes are the cache types the micro model's head shape allows.
func propertyCacheTypes(m *model.Model) []quant.CacheType {
	var out []quant.CacheType
	for _, ct := range quant.CacheTypes() {
		if ct.Validate(m.Config.KVHeads, m.Config.HeadDim) == nil {
			out = append(out, ct)
		}
	}
	return out
}
