package golden

import (
	"fmt"

	"github.com/kvref/kvref/engine"
)

// hybridClasses are the classes of the hybrid suite, for models whose sliding layers sit
// beside full ones (Gemma 2 and 3): kvref keeps one block table per cache group, the
// sliding groups release the blocks a sequence slid past while the full groups keep
// theirs, and a prefix hit must be served by every group — all of a full group's blocks,
// only the window's of a sliding group (kvcache.Pool.AddSequence). W is Params.Window, B the
// block size; Gf and Gs count the full and sliding groups (Params.FullGroups,
// SlidingGroups), G = Gf + Gs. A block of the pool serves one group, so a sequence of n
// tokens holds about G·ceil(n/B) blocks before its sliding groups release any.
//
// The sizes of hit-shortened and eviction-in-one-group follow kvref's pool exactly (which
// blocks are cached, in what order they are evicted); another engine with another pool
// may hit where kvref misses (vacuous) or keep what kvref evicted (its hit is then longer,
// which the teacher-forced logits still check).
var hybridClasses = []Class{
	{
		Name:    "hybrid-hit-longer-than-window",
		Summary: "prefix hits longer than the sliding window (a sliding group must serve only its window's blocks, a full group every block; restoring the wrong state for either)",
		Hybrid:  true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			x1, x2 := seg(1, w+b-1), seg(11, w+4) // x1 is w+b tokens with BOS
			aLen := 2*w + b + 4 + 5
			if err := hybridFit(p, aLen+8, 2*p.groups()*ceilDiv(aLen+8, b)); err != nil {
				return nil, err
			}
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d. A (%d prompt tokens) decodes 8, sliding past its first blocks; then B repeats A's prompt plus 7 (a hit of more than twice the window: the full groups reuse every block, the sliding groups only the last window's) and C the first %d tokens plus 5 (a hit of window plus a block).",
				w, b, aLen, w+b),
				submit(greedy("A", parts(x1, x2, seg(2, 5)), 8)),
				waitAll(),
				submit(
					expect(greedy("B", parts(x1, x2, seg(3, 7)), 8), ExpectHit),
					expect(greedy("C", parts(x1, seg(4, 5)), 8), ExpectHit),
				),
			)
			sc.Expect.Reclaim = true
			return sc, nil
		},
	},
	{
		Name:    "hybrid-hit-shortened",
		Summary: "a prefix whose full-group blocks are all cached but whose sliding-group blocks for the longest hit were evicted: the hit must shrink to where every group can serve it (stale state restored, or a hit too long)",
		Hybrid:  true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			gf, gs, g := p.FullGroups, p.SlidingGroups, p.groups()
			k := ceilDiv(w, b) + 1    // A2's hit, in blocks: longer than the window
			j := k + 2                // B's prefix, in blocks
			aLen := (j+1)*b + w + 3   // A's prompt: its window ends past block j
			r := (aLen - w + 1) / b   // sliding blocks A releases: [0, r)
			lo := max(0, k*b-w+1) / b // the first block of the window before position k·B
			last := aLen / b          // A's full blocks: [0, last)
			e1 := gs * (r - (k - lo)) // A's released sliding blocks that A2 does not take again
			free := p.Blocks - g*last
			nb := ceilDiv(free+e1, g) // the filler's blocks per group: evicts e1 to e1+G−1
			fLen := nb * b
			switch {
			case r < j || free < 1:
				return nil, skipf("the pool (%d blocks) does not hold A's %d blocks with room to spare", p.Blocks, g*last)
			case gf*(last-j)+gs*(last-r) < g: // what may be evicted beyond e1 without touching B's blocks
				return nil, skipf("the window (%d) is too short for blocks of %d", w, b)
			}
			if err := hybridFit(p, fLen+2, gf*(nb+1)+gs*min(nb+1, ceilDiv(2*w, b)+1)); err != nil {
				return nil, err
			}
			x1, x2 := seg(1, k*b-1), seg(2, (j-k)*b)
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d, a pool of %d in %d full and %d sliding cache groups. A (%d prompt tokens) runs alone: its sliding groups release blocks 0..%d as its prefill slides, and it ends with every block cached. A2 (A's first %d tokens plus 3) hits them (the full groups' blocks 0..%d, the sliding groups' %d..%d) and ends. A filler of %d tokens then evicts the oldest cached blocks: exactly the sliding groups' blocks A released and A2 did not take again. B asks for A's first %d tokens plus 3: the full groups still hold all %d blocks, but a hit of more than %d blocks would need sliding blocks that are gone, so the hit must be %d tokens.",
				w, b, p.Blocks, gf, gs, aLen, r-1, k*b, k-1, lo, k-1, fLen, j*b, j, k, k*b),
				submit(greedy("A", parts(x1, x2, seg(3, aLen-j*b)), 1)),
				waitAll(),
				submit(expect(greedy("A2", parts(x1, seg(4, 3)), 1), ExpectHit)),
				waitAll(),
				submit(expect(greedy("F", parts(seg(6, fLen-1)), 1), ExpectMiss)),
				waitAll(),
				submit(expect(greedy("B", parts(x1, x2, seg(5, 3)), 8), ExpectHit)),
			)
			sc.Expect.Eviction, sc.Expect.Reclaim = true, true
			sc.Expect.ShortHit = &ShortHit{Request: "B", Below: j * b}
			return sc, nil
		},
	},
	{
		Name:    "hybrid-eviction-in-one-group",
		Summary: "eviction pressure that falls on the sliding groups only (blocks a window released are the oldest cached), while the prefix's full-group blocks and its last window survive (evicting the wrong group, a hit that reads an evicted block)",
		Hybrid:  true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			g, gs := p.groups(), p.SlidingGroups
			aLen := 3*w + b/2
			computed := aLen // A's one token is sampled, not computed
			r := (computed - w + 1) / b
			n := aLen / b // R's hit, in blocks (R is A's prompt plus 2)
			if lo := max(0, n*b-w+1) / b; lo < r {
				return nil, skipf("the window (%d) is not a multiple of the block size (%d): R's window would start in a released block", w, b)
			}
			free := p.Blocks - g*(computed/b)
			e1 := gs * r
			nb := (free + e1) / g // evicts G·nb − free ∈ [1, e1] blocks, all released sliding ones
			if free < 1 || g*nb <= free {
				return nil, skipf("the pool (%d blocks) does not hold A's %d blocks with room for a filler that evicts between 1 and %d", p.Blocks, g*(computed/b), e1)
			}
			if err := hybridFit(p, nb*b+2, p.FullGroups*(nb+1)+gs*min(nb+1, ceilDiv(2*w, b)+1)); err != nil {
				return nil, err
			}
			x := seg(1, aLen-1)
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d, a pool of %d. A (%d prompt tokens) produces one token and ends: its sliding groups released their first %d blocks as its prefill slid, the rest were freed at its end. A filler of %d tokens evicts %d of the oldest cached blocks: only released sliding blocks. R asks for A's prompt plus 2: its full groups' blocks and the sliding groups' last window (freed, not released: a firm hit) are all cached, so R hits all %d of A's full blocks.",
				w, b, p.Blocks, aLen, r, nb*b, g*nb-free, n),
				submit(greedy("A", parts(x), 1)),
				waitAll(),
				submit(expect(greedy("F", parts(seg(6, nb*b-1)), 1), ExpectMiss)),
				waitAll(),
				submit(expect(greedy("R", parts(x, seg(3, 2)), 8), ExpectHit)),
			)
			sc.Expect.Eviction, sc.Expect.Reclaim, sc.Expect.EvictionsIn = true, true, "sliding"
			return sc, nil
		},
	},
	{
		Name:    "hybrid-preempt-across-window",
		Summary: "preemption of sequences whose sliding groups already released blocks while their full groups kept every block, and their recomputation across the window boundary (tables that differ per group, tokens dropped or duplicated)",
		Hybrid:  true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			g := p.groups()
			sLen, gen := w+b/2, 2*w
			promise := g * ceilDiv(sLen+1, b)
			n := (p.Blocks - 2) / promise
			end := p.FullGroups*ceilDiv(sLen+gen, b) + p.SlidingGroups*(ceilDiv(w, b)+1)
			switch {
			case n < 2:
				return nil, skipf("the pool (%d blocks) admits fewer than two prompts of %d blocks", p.Blocks, promise)
			case n*end <= p.Blocks+g:
				return nil, skipf("the pool (%d blocks) holds %d sequences decoding %d tokens: nothing to preempt", p.Blocks, n, gen)
			case n > 64:
				return nil, skipf("the pool (%d blocks) would take more than 64 sequences to outgrow", p.Blocks)
			}
			if err := hybridFit(p, sLen+gen, 0); err != nil {
				return nil, err
			}
			var wave []Request
			for i := range n {
				wave = append(wave, greedy(fmt.Sprintf("S%d", i), parts(seg(uint64(10+i), sLen-1)), gen))
			}
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d, a pool of %d. %d requests of %d prompt tokens, each promised its prompt's %d blocks in all %d groups, decode %d tokens each: their full groups grow by a block every %d tokens while their sliding groups hold about a window, and together they outgrow the pool, so sequences that already slid past the window are preempted and recomputed across it; then S0's prompt is asked for again.",
				w, b, p.Blocks, n, sLen, ceilDiv(sLen+1, b), g, gen, b),
				submit(wave...),
				waitAll(),
				submit(greedy("R", parts(seg(10, sLen-1)), 8)),
			)
			sc.Expect.Preemption, sc.Expect.PreemptionAfterReclaim, sc.Expect.Reclaim = true, true, true
			return sc, nil
		},
	},
	{
		Name:    "hybrid-fork-across-window",
		Summary: "parallel continuations that share their prompt's blocks in every group and decode across the window boundary (copy-on-write per group, a fork releasing a shared sliding block its siblings still read)",
		Hybrid:  true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			pLen, gen := w-b/2, 2*w
			per := p.FullGroups*ceilDiv(pLen+gen, b) + p.SlidingGroups*(ceilDiv(w, b)+2)
			if err := hybridFit(p, pLen+gen+8, 3*per+p.groups()*ceilDiv(pLen+8, b)); err != nil {
				return nil, err
			}
			x := seg(1, pLen-1)
			fork := Request{ID: "A", Prompt: parts(x), MaxTokens: gen, N: 3, IgnoreEOS: true,
				Sampling: &engine.Sampling{Temperature: 1, TopP: 1, Seed: 4321}}
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d. A (%d prompt tokens, inside one window) forks into 3 sampled continuations of %d tokens: they share the prompt's blocks in every cache group, copy the last one on their first write, and slide past the shared blocks in the sliding groups while the full groups keep them; then R repeats the prompt plus 5.",
				w, b, pLen, gen),
				submit(fork),
				waitAll(),
				submit(expect(greedy("R", parts(x, seg(2, 5)), 8), ExpectHit)),
			)
			sc.Expect.Reclaim = true
			return sc, nil
		},
	},
	{
		Name:    "hybrid-chunked-prefill-across-window",
		Summary: "prompts prefilled in chunks that end mid-block and cross the window boundary, two at once (a sliding group releasing a block a later chunk still reads, chunks of two sequences mixed up)",
		Hybrid:  true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			chunk := b + b/2 + 1
			if chunk%b == 0 {
				chunk++
			}
			x := seg(1, w+b-1)
			aLen, bLen := w+b+w+b/2+3, w+5
			if err := hybridFit(p, aLen+8, p.groups()*(ceilDiv(aLen+8, b)+ceilDiv(bLen+8, b)+ceilDiv(w+b+13, b))); err != nil {
				return nil, err
			}
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d, prefill chunks of %d (ending mid-block). A (%d prompt tokens) and B (%d) prefill together, chunk by chunk across the window boundary, and decode 8; then R asks for A's first %d tokens plus 5 (a hit longer than the window).",
				w, b, chunk, aLen, bLen, w+b),
				submit(greedy("A", parts(x, seg(2, w+b/2+3)), 8), greedy("B", parts(seg(3, bLen-1)), 8)),
				waitAll(),
				submit(expect(greedy("R", parts(x, seg(4, 5)), 8), ExpectHit)),
			)
			sc.Cache.ChunkSize = chunk
			sc.Expect.Reclaim = true
			return sc, nil
		},
	},
}

// groups is the number of cache groups (1 for a uniform model).
func (p Params) groups() int { return max(1, p.FullGroups+p.SlidingGroups) }

// hybridFit returns a skip error when a hybrid class does not fit the parameters: no cache
// groups, a window shorter than two blocks, a context shorter than its longest sequence or
// a pool smaller than the blocks it needs.
func hybridFit(p Params, longest, blocks int) error {
	switch {
	case p.FullGroups == 0 || p.SlidingGroups == 0:
		return skipf("the model has no cache groups (sliding layers beside full ones)")
	case p.Window < 2*p.BlockSize:
		return skipf("the window (%d tokens) spans less than two blocks of %d", p.Window, p.BlockSize)
	case longest > p.Context:
		return skipf("needs a context of %d tokens, the model has %d", longest, p.Context)
	case blocks > p.Blocks:
		return skipf("needs about %d blocks, the pool has %d (Params.Blocks)", blocks, p.Blocks)
	}
	return nil
}
