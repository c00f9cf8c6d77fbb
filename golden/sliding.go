package golden

import "fmt"

// slidingClasses are the classes of the sliding suite, for models with sliding-window
// attention: the query at position p attends over [p−W+1, p], and when every layer slides
// the cache releases the blocks a sequence has slid past (kvcache.Pool.Reclaim). W is
// Params.Window, B the block size. Every scenario decodes past the window, so a candidate
// that masks one position too many or too few, or not at all, fails on its outputs.
var slidingClasses = []Class{
	{
		Name:    "window-crossing-block-boundary",
		Summary: "sequences whose window starts exactly at a block's first slot when decoding begins (mask off-by-one, a block released a token early or late), then prompts reusing what they slid past",
		Sliding: true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			gen := 2*b + 2
			// The window of the last prompt token, [L−W, L−1], starts at the first slot of
			// block 0 (the whole prompt: the first generated token is the first query that
			// no longer sees position 0), of block 1, and of block ceil(W/B).
			edges := []int{0, 1, ceilDiv(w, b)}
			var lengths []int
			for _, e := range edges {
				lengths = append(lengths, w+e*b)
			}
			wave, need := crossingWave(p, lengths, gen, w)
			last := lengths[2]
			if err := slidingFit(p, false, last+gen, need+seqBlocks(p, w+gen+b/2+8, w)); err != nil {
				return nil, err
			}
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d. One wave: A (%d prompt tokens: its first generated token is the first query that no longer sees position 0), B (%d: the window starts at block 1, block 0 lies wholly outside it) and C (%d: the window starts at block %d), each decoding %d tokens, so the window's oldest position crosses at least two more block boundaries while decoding; then R continues A's prompt and output, and S repeats C's prompt: both reuse blocks the window released, which kvref keeps cached.",
				w, b, w, w+b, last, edges[2], gen),
				submit(wave...),
				waitAll(),
				submit(
					expect(greedy("R", parts(seg(1, w-1), outputOf("A", 0, 0), seg(4, b/2)), 8), ExpectHit),
					expect(greedy("S", parts(seg(3, last-1)), 8), ExpectHit),
				),
			)
			sc.Expect.Reclaim = p.Reclaims
			return sc, nil
		},
	},
	{
		Name:    "window-crossing-mid-block",
		Summary: "sequences whose window starts inside a block when decoding begins, prefilled in chunks that end mid-block (a block released while the window still reads part of it)",
		Sliding: true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			gen := 2*b + 2
			chunk := b + b/2 + 1
			if chunk%b == 0 {
				chunk++
			}
			// The window of the last prompt token starts this many positions past a block
			// boundary: 1, B/2, and 2B + B/2 − 1 (never a multiple of B).
			var offsets []int
			for _, o := range []int{1, b / 2, 2*b + max(1, b/2-1)} {
				if o%b != 0 && (len(offsets) == 0 || offsets[len(offsets)-1] != o) {
					offsets = append(offsets, o)
				}
			}
			lengths := lengthsOf(w, offsets)
			wave, need := crossingWave(p, lengths, gen, chunk)
			last := lengths[len(lengths)-1]
			if err := slidingFit(p, false, last+gen, need+seqBlocks(p, w+gen+12, chunk)); err != nil {
				return nil, err
			}
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d, prefill chunks of %d (ending mid-block). One wave of prompts of %v tokens, whose last token's window starts %v positions into a block, each decoding %d tokens; then R continues A's prompt and output, reusing blocks the window released (kvref keeps them cached).",
				w, b, chunk, lengths, offsets, gen),
				submit(wave...),
				waitAll(),
				submit(expect(greedy("R", parts(seg(1, w), outputOf("A", 0, 0), seg(5, 3)), 8), ExpectHit)),
			)
			sc.Cache.ChunkSize = chunk
			sc.Expect.Reclaim = p.Reclaims
			return sc, nil
		},
	},
	{
		Name:    "shared-prefix-slid-past",
		Summary: "two sequences share a prefix that one slides past while the other still reads it, then new requests for that prefix (a shared block freed when one holder slides past it; what a later request may reuse)",
		Sliding: true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			xb := 1 // blocks in the shared prefix X (BOS included): 2 when the window allows
			if w >= 3*b {
				xb = 2
			}
			x := seg(1, xb*b-1)
			hLen, eLen := xb*b+b/2, xb*b+b/2+3
			// H and E never slide past anything: their last computed position stays below
			// W+B−1, where the first block would leave the window.
			hGen, eGen := w+b-2-hLen, min(8, w+b-2-eLen)
			aLen := xb*b + w + 2*b
			if hGen < 1 || eGen < 1 {
				return nil, skipf("the window (%d tokens) is too short for a holder that never slides past a prefix of %d blocks of %d", w, xb, b)
			}
			if err := slidingFit(p, true, aLen+3+8, seqBlocks(p, w+b, w)+2*seqBlocks(p, aLen+8, w)+seqBlocks(p, w+b, w)); err != nil {
				return nil, err
			}
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d. H (X, the shared first %d tokens, plus %d) decodes %d tokens, never leaving its window; once it runs, A (X plus %d tokens, a hit on X) slides past X during its prefill and drops its references to X while H still reads it; E (X plus %d) then hits X, which H holds; after all finish, F repeats A's prompt plus 3 tokens: X is cached as H and E left it, A's later blocks were only ever released by A's sliding window (kvref keeps them cached, so F reuses them; a candidate that drops such blocks recomputes them).",
				w, b, xb*b, b/2, hGen, w+2*b, b/2+3),
				submit(greedy("H", parts(x, seg(2, b/2)), hGen)),
				waitTokens("H", 1),
				submit(expect(greedy("A", parts(x, seg(3, w+2*b)), b+2), ExpectHit)),
				waitTokens("A", 1),
				submit(expect(greedy("E", parts(x, seg(4, b/2+3)), eGen), ExpectHit)),
				waitAll(),
				submit(expect(greedy("F", parts(x, seg(3, w+2*b), seg(5, 3)), 8), ExpectHit)),
			)
			sc.Expect.Reclaim = true
			return sc, nil
		},
	},
	{
		Name:    "preempt-after-reclaim",
		Summary: "preemption of sequences that already released the blocks they slid past, and their recomputation (a resumed table with holes, tokens dropped or duplicated)",
		Sliding: true,
		build: func(p Params) (*Scenario, error) {
			b, w := p.BlockSize, p.Window
			k := ceilDiv(w, b) + 1 // blocks a decoding sliding sequence holds at most
			short := (85 * p.Blocks / 100) / k
			long := ceilDiv(120*p.Blocks/100-short*k, k)
			sLen, vLen, decode := b/2+1, w+2*b+b/2, w+2*b
			switch {
			case short < 1:
				return nil, skipf("the pool (%d blocks) holds less than one window of %d blocks", p.Blocks, k)
			case short+long > 64:
				return nil, skipf("the pool (%d blocks) holds %d windows of %d blocks: outgrowing it would take more than 64 sequences; a smaller pool (Params.Blocks) keeps it within 64", p.Blocks, p.Blocks/k, k)
			}
			if err := slidingFit(p, true, vLen+decode, 2*(ceilDiv(2*w, b)+1)); err != nil {
				return nil, err
			}
			var first, second []Request
			for i := range short {
				first = append(first, greedy(fmt.Sprintf("S%d", i), parts(seg(uint64(10+i), sLen-1)), decode))
			}
			for i := range long {
				second = append(second, greedy(fmt.Sprintf("V%d", i), parts(seg(uint64(100+i), vLen-1)), decode))
			}
			sc := newScenario(fmt.Sprintf("Window %d, blocks of %d, a pool of %d. %d requests of %d prompt tokens decode %d tokens each; once they run, %d requests of %d prompt tokens, which release their first blocks as their prefill slides, join them. A decoding sliding sequence holds at most %d blocks, together about %d, so sequences that already released blocks are preempted and recomputed (window by window); then V0's prompt is asked for again.",
				w, b, p.Blocks, short, sLen, decode, long, vLen, k, (short+long)*k),
				submit(first...),
				waitTokens("S0", 1),
				submit(second...),
				waitAll(),
				submit(greedy("R", parts(seg(100, vLen-1)), 8)),
			)
			sc.Expect.Preemption, sc.Expect.PreemptionAfterReclaim, sc.Expect.Reclaim = true, true, true
			return sc, nil
		},
	},
}

// slidingFit returns a skip error when a sliding class does not fit the parameters: no
// window, a window shorter than two blocks, no reclamation where the class needs it, a
// context shorter than its longest sequence or a pool smaller than the blocks it needs.
func slidingFit(p Params, reclaim bool, longest, blocks int) error {
	switch {
	case p.Window == 0:
		return skipf("the model has no sliding window")
	case p.Window < 2*p.BlockSize:
		return skipf("the window (%d tokens) spans less than two blocks of %d", p.Window, p.BlockSize)
	case reclaim && !p.Reclaims:
		return skipf("some layers attend over every position (Qwen2's max_window_layers, Gemma's global layers), so no block ever falls out of every layer's window; with cache groups the sliding groups release theirs, which the hybrid suite checks")
	case longest > p.Context:
		return skipf("needs a context of %d tokens, the model has %d", longest, p.Context)
	case blocks > p.Blocks:
		return skipf("needs about %d blocks, the pool has %d (Params.Blocks)", blocks, p.Blocks)
	}
	return nil
}

// seqBlocks is about how many blocks kvref holds at most for a sequence of n tokens
// prefilled in chunks of at most chunk: with reclamation the window, one chunk and the
// block being written; without, every block. With cache groups (Gemma's sliding layers
// beside global ones) every group holds its own table from the one pool: each full group
// every block, each sliding group its window's.
func seqBlocks(p Params, n, chunk int) int {
	all := ceilDiv(n, p.BlockSize)
	window := min(all, ceilDiv(p.Window+min(chunk, p.Window), p.BlockSize)+1)
	switch {
	case p.FullGroups+p.SlidingGroups > 0:
		return p.FullGroups*all + p.SlidingGroups*window
	case p.Reclaims:
		return window
	}
	return all
}

// crossingWave is a wave of greedy requests A, B, C, ... with prompts of the given lengths
// (seeds 1, 2, 3, ...), each decoding gen tokens, and about how many blocks they hold
// together when prefilled in chunks of at most chunk.
func crossingWave(p Params, lengths []int, gen, chunk int) (wave []Request, blocks int) {
	for i, l := range lengths {
		wave = append(wave, greedy(string(rune('A'+i)), parts(seg(uint64(i+1), l-1)), gen))
		blocks += seqBlocks(p, l+gen, chunk)
	}
	return wave, blocks
}

// lengthsOf returns w+o for every offset o.
func lengthsOf(w int, offsets []int) []int {
	out := make([]int, len(offsets))
	for i, o := range offsets {
		out[i] = w + o
	}
	return out
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
