package golden

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// Params size the built-in scenarios: the block size and pool size of the reference side
// (give the candidate the same), the model's context and attention window, and which
// cache types apply.
type Params struct {
	BlockSize int `json:"block_size"`
	Blocks    int `json:"cache_blocks"`
	Context   int `json:"context"`
	// Window is the model's sliding attention window W (the query at p attends over
	// [p−W+1, p]; model.Config.SlidingWindow); 0: every position. The sliding suite needs one.
	Window int `json:"sliding_window,omitempty"`
	// Reclaims says every layer slides (model.Config.ReclaimWindow), so kvref releases the
	// blocks a sequence has slid past; a model whose first layers attend over every
	// position (Qwen2's max_window_layers) masks but releases nothing.
	Reclaims bool `json:"reclaims,omitempty"`
	// FullGroups and SlidingGroups count kvref's cache groups of a model whose sliding
	// layers sit beside full ones (Gemma 2 and 3; engine.CacheGroups): the hybrid suite
	// needs both. 0 and 0 for a uniform model.
	FullGroups    int `json:"full_groups,omitempty"`
	SlidingGroups int `json:"sliding_groups,omitempty"`
	// Supports reports whether a cache type applies to the model (q8_0 needs
	// kv_heads·head_dim to be a multiple of 32); nil: every type applies.
	Supports func(quant.CacheType) bool `json:"-"`
}

// DefaultParams are the sizes the suites are designed around: blocks of 16 tokens (vLLM's
// default) and a pool of 128 blocks (2048 tokens), small enough that eviction and
// preemption happen with prompts of a few hundred tokens.
func DefaultParams() Params { return Params{BlockSize: 16, Blocks: 128, Context: 2048} }

// ParamsFor sizes the built-in scenarios for a model: the given block size, pool and
// context, the model's attention window, and the cache types its K/V rows can be stored as.
func ParamsFor(m *model.Model, blockSize, blocks, context int) Params {
	c := m.Config
	p := Params{
		BlockSize: blockSize, Blocks: blocks, Context: context, Window: c.SlidingWindow, Reclaims: c.ReclaimWindow() > 0,
		Supports: func(t quant.CacheType) bool { return t.Validate(c.KVHeads, c.HeadDim) == nil },
	}
	for _, g := range engine.CacheGroups(c) {
		if g.Window > 0 {
			p.SlidingGroups++
		} else {
			p.FullGroups++
		}
	}
	return p
}

func (p Params) tokens() int { return p.BlockSize * p.Blocks }

// Class is one class of cache bug and the scenario that exercises it.
type Class struct {
	Name    string // the scenario's name before the cache type suffix
	Summary string // the bug class, in a line
	// QuantizedInDefault puts the class at every quantized cache type in the default suite
	// (every class is at every type in the full suite).
	QuantizedInDefault bool
	// Sliding marks a class about sliding-window attention: it is in the sliding suite (and
	// in full, for a model with a window), never in default.
	Sliding bool
	// Hybrid marks a class about cache groups (sliding layers beside full ones): it is in
	// the hybrid suite (and in full, for a model with groups), never in default.
	Hybrid bool
	build  func(p Params) (*Scenario, error)
}

// errSkip marks a class that does not fit the parameters (a context too short for long
// prompts, say); Suite reports it and goes on.
var errSkip = errors.New("skipped")

// Classes returns the built-in classes in library order: the general ones, then the
// sliding-window ones.
func Classes() []Class { return slices.Concat(classes, promptClasses, slidingClasses, hybridClasses) }

// Suites names the built-in suites.
var Suites = []string{"default", "full", "sliding", "hybrid", "prompt-logprobs"}

// ErrNoGroups is returned (wrapped) for the hybrid suite on a model without cache groups.
var ErrNoGroups = errors.New("golden: the hybrid suite needs a model with cache groups (sliding layers beside full ones, as Gemma 2 and 3)")

// ErrNoWindow is returned (wrapped) for the sliding suite on a model without a sliding
// attention window.
var ErrNoWindow = errors.New("golden: the sliding suite needs a model with sliding-window attention")

// Skipped is a scenario a suite left out, and why.
type Skipped struct {
	Name   string
	Reason string
}

// Suite returns the scenarios of a built-in suite for the parameters: "default" (every
// general class with an f32 reference cache, and the hit-path classes at every quantized
// cache type), "full" (every class at every cache type, the sliding-window classes
// included when the model has a window) or "sliding" (the sliding-window classes with an
// f32 reference cache; an error wrapping ErrNoWindow for a model without a window) or
// "hybrid" (the cache-group classes with an f32 reference cache; an error wrapping
// ErrNoGroups for a model without cache groups).
// Classes that do not fit the parameters are returned as skipped, with the reason.
func Suite(name string, p Params) ([]*Scenario, []Skipped, error) {
	return suite(name, p, nil)
}

// SuiteAt returns the classes of a built-in suite at exactly the given cache types
// (kvref golden --cache-dtypes).
func SuiteAt(name string, p Params, types []quant.CacheType) ([]*Scenario, []Skipped, error) {
	if len(types) == 0 {
		return nil, nil, fmt.Errorf("golden: no cache type given for suite %s", name)
	}
	return suite(name, p, types)
}

// suite builds a suite's classes at types, or at the suite's own choice of types when nil.
func suite(name string, p Params, types []quant.CacheType) ([]*Scenario, []Skipped, error) {
	if p.BlockSize < 2 || p.Blocks < 8 {
		return nil, nil, fmt.Errorf("golden: the built-in scenarios need a block size ≥ 2 and ≥ 8 blocks, got %d and %d", p.BlockSize, p.Blocks)
	}
	if p.Context < 64 {
		return nil, nil, fmt.Errorf("golden: the built-in scenarios need a context of at least 64 tokens, got %d", p.Context)
	}
	var members []Class
	at := func(c Class, t quant.CacheType) bool { return types != nil && slices.Contains(types, t) }
	switch name {
	case "default":
		members = classes
		if types == nil {
			at = func(c Class, t quant.CacheType) bool { return t == quant.F32 || c.QuantizedInDefault }
		}
	case "full":
		members = slices.Concat(classes, promptClasses)
		if p.Window > 0 {
			members = slices.Concat(classes, promptClasses, slidingClasses)
		}
		if p.FullGroups > 0 && p.SlidingGroups > 0 {
			members = append(members, hybridClasses...)
		}
		if types == nil {
			at = func(Class, quant.CacheType) bool { return true }
		}
	case "prompt-logprobs":
		members = promptClasses
		if types == nil {
			at = func(c Class, t quant.CacheType) bool { return t == quant.F32 || t == quant.F16 }
		}
	case "sliding":
		if p.Window == 0 {
			return nil, nil, fmt.Errorf("%w; this model attends over every position (no sliding_window in its metadata or config). The sliding suite needs a model with a window (a model/synth Shape with SlidingWindow set is one); the default suite runs on any model", ErrNoWindow)
		}
		if p.Window < 2*p.BlockSize {
			return nil, nil, &WindowTooShortError{Window: p.Window, BlockSize: p.BlockSize}
		}
		members = slidingClasses
		if types == nil {
			at = func(c Class, t quant.CacheType) bool { return t == quant.F32 }
		}
	case "hybrid":
		if p.FullGroups == 0 || p.SlidingGroups == 0 {
			return nil, nil, fmt.Errorf("%w; this model's layers all attend alike. A synthetic one: kvref synth --arch gemma3 --sliding-window 32 (every sixth layer global)", ErrNoGroups)
		}
		if p.Window < 2*p.BlockSize {
			return nil, nil, &WindowTooShortError{Window: p.Window, BlockSize: p.BlockSize}
		}
		members = hybridClasses
		if types == nil {
			at = func(c Class, t quant.CacheType) bool { return t == quant.F32 }
		}
	default:
		return nil, nil, fmt.Errorf("golden: unknown suite %q; the suites are %s", name, strings.Join(Suites, ", "))
	}
	var out []*Scenario
	var skipped []Skipped
	for _, c := range members {
		for _, t := range quant.CacheTypes() {
			name := c.Name + "." + t.String()
			if !at(c, t) {
				continue
			}
			if p.Supports != nil && !p.Supports(t) {
				skipped = append(skipped, Skipped{name, fmt.Sprintf("the model's K/V rows cannot be stored as %s", t)})
				continue
			}
			sc, err := c.build(p)
			if errors.Is(err, errSkip) {
				skipped = append(skipped, Skipped{name, strings.TrimSuffix(err.Error(), ": "+errSkip.Error())})
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			sc.Format = ScenarioFormat
			sc.Name = name
			sc.Class = c.Name
			sc.Seed = seedOf(name)
			sc.Cache.BlockSize, sc.Cache.Blocks = p.BlockSize, p.Blocks
			sc.Cache.TypeK, sc.Cache.TypeV = t.String(), t.String()
			if err := sc.Validate(); err != nil {
				return nil, nil, fmt.Errorf("golden: built-in scenario %s: %w", name, err)
			}
			out = append(out, sc)
		}
	}
	return out, skipped, nil
}

// seedOf derives a scenario's prompt seed from its name, so that the scenarios of a suite
// never share a prefix with each other on a candidate that runs them one after another.
func seedOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// Helpers that keep the scenario builders short.

func seg(seed uint64, n int) Part            { return Part{Seed: seed, Length: n} }
func outputOf(id string, choice, n int) Part { return Part{OutputOf: id, Choice: choice, Length: n} }
func parts(ps ...Part) Prompt                { return Prompt{Parts: ps} }
func submit(rs ...Request) Event             { return Event{Submit: rs} }
func waitAll() Event                         { return Event{Wait: &Wait{}} }
func waitTokens(id string, n int) Event      { return Event{Wait: &Wait{Request: id, Tokens: n}} }
func greedy(id string, p Prompt, n int) Request {
	return Request{ID: id, Prompt: p, MaxTokens: n, IgnoreEOS: true}
}
func expect(r Request, what string) Request { r.ExpectCache = what; return r }
func skipf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errSkip)...)
}
func newScenario(desc string, ev ...Event) *Scenario { return &Scenario{Description: desc, Events: ev} }

// classes is the built-in library. Prompt lengths below count BOS: a parts prompt of
// seeded parts totalling n tokens is n+1 tokens long.
var classes = []Class{
	{
		Name:               "mixed-hits-misses",
		Summary:            "prefix hits and misses scheduled in the same step (blocks served to the wrong request, batch-layout bugs)",
		QuantizedInDefault: true,
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := seg(1, 3*b)
			return newScenario("A caches a 3-block prefix; then one wave mixes two requests that hit it with two that miss.",
				submit(greedy("A", parts(x, seg(2, 5)), 12)),
				waitAll(),
				submit(
					expect(greedy("B", parts(x, seg(3, 7)), 12), ExpectHit),
					expect(greedy("C", parts(seg(4, 3*b+5)), 12), ExpectMiss),
					expect(greedy("D", parts(x, seg(5, b+2)), 12), ExpectHit),
					expect(greedy("E", parts(seg(6, 2*b+1)), 12), ExpectMiss),
				),
			), nil
		},
	},
	{
		Name:               "block-boundary-lengths",
		Summary:            "prompt lengths at block size −1, exactly, +1 and full-prompt hits (off-by-one at block edges, the last prompt token)",
		QuantizedInDefault: true,
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			var wave []Request
			seen := map[int]bool{}
			for _, n := range []int{b - 1, b, b + 1, 2*b - 1, 2 * b, 2*b + 1, 4 * b, 4*b + 1} {
				if n < 2 || seen[n] {
					continue // BOS and at least one token; block size 2 makes b+1 = 2b-1
				}
				seen[n] = true
				r := greedy(fmt.Sprintf("L%d", n), parts(seg(1, n-1)), 8)
				if n > b {
					r.ExpectCache = ExpectHit
				}
				wave = append(wave, r)
			}
			return newScenario(fmt.Sprintf("A caches a 4-block prompt; then one wave asks for its prefixes of %d, %d, %d, %d, %d, %d tokens, the whole prompt again (a full-prompt hit) and one token more.",
				b-1, b, b+1, 2*b-1, 2*b, 2*b+1),
				submit(greedy("A", parts(seg(1, 4*b-1)), 8)),
				waitAll(),
				submit(wave...),
			), nil
		},
	},
	{
		Name:    "prefix-diverges-mid-block",
		Summary: "shared prefixes that diverge inside a block (partial blocks wrongly shared or hashed)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := seg(1, 2*b+b/2)
			return newScenario("A and B share 2½ blocks and diverge inside block 2, in the same wave; then C and D reuse A's and B's block 2, which straddles the divergence, and E diverges at the same point with other tokens.",
				submit(greedy("A", parts(x, seg(2, b)), 10), greedy("B", parts(x, seg(3, b)), 10)),
				waitAll(),
				submit(
					expect(greedy("C", parts(x, seg(2, b/2)), 10), ExpectHit),
					expect(greedy("D", parts(x, seg(3, b/2+3)), 10), ExpectHit),
					expect(greedy("E", parts(x, seg(9, b)), 10), ExpectHit),
				),
			), nil
		},
	},
	{
		Name:    "same-step-shared-prefix",
		Summary: "two requests sharing a prefix that arrive in the same step (both compute the same blocks; double registration)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := seg(1, 3*b-1)
			return newScenario(fmt.Sprintf("A and B share %d tokens (3 blocks, BOS included) and arrive in the same step; then C asks for the same prefix.", 3*b),
				submit(greedy("A", parts(x, seg(2, 5)), 12), greedy("B", parts(x, seg(3, 9)), 12)),
				waitAll(),
				submit(expect(greedy("C", parts(x, seg(4, 2)), 12), ExpectHit)),
			), nil
		},
	},
	{
		Name:    "identical-requests",
		Summary: "identical requests in the same wave (deduplication, shared last block, sampling state)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := parts(seg(1, 3*b+4))
			return newScenario("Four identical greedy requests in one wave, then a fifth after they finish.",
				submit(greedy("A", x, 16), greedy("B", x, 16), greedy("C", x, 16), greedy("D", x, 16)),
				waitAll(),
				submit(expect(greedy("E", x, 16), ExpectHit)),
			), nil
		},
	},
	{
		Name:    "evict-then-rerequest",
		Summary: "eviction then re-request of the evicted prefix, twice over (blocks freed while still indexed, stale hashes)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			t := p.tokens()
			filler := min(t/4, p.Context/2) - 1
			if filler < b {
				return nil, skipf("the pool (%d tokens) is too small for fillers of a block or more", t)
			}
			count := t/(filler+1) + 2
			a := parts(seg(1, 3*b+5))
			sc := newScenario(fmt.Sprintf("A is cached; %d filler prompts of %d tokens (1.5× the pool) evict it; A is asked for again (a miss, recomputed), once more (a hit), then the fillers and A run a second time.", count, filler+1))
			for pass := range 2 {
				first := expect(greedy(fmt.Sprintf("A%d", 2*pass), a, 8), "")
				if pass == 1 {
					first.ExpectCache = ExpectHit
				}
				sc.Events = append(sc.Events, submit(first), waitAll())
				for i := 0; i < count; i += 2 {
					var wave []Request
					for j := i; j < min(i+2, count); j++ {
						wave = append(wave, greedy(fmt.Sprintf("F%d.%d", pass, j), parts(seg(uint64(100+j), filler)), 4))
					}
					sc.Events = append(sc.Events, submit(wave...), waitAll())
				}
				sc.Events = append(sc.Events, submit(expect(greedy(fmt.Sprintf("A%d", 2*pass+1), a, 8), ExpectMiss)), waitAll())
			}
			sc.Expect.Eviction = true
			return sc, nil
		},
	},
	{
		Name:    "cancel-mid-prefill",
		Summary: "cancel during a chunked prefill, then re-request the same prefix (half-written blocks registered or reused)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := seg(1, 8*b-1)
			sc := newScenario("A (8 blocks) and C (sharing A's first 8 blocks but one token) start together with prefill chunks of 2 blocks; A is cancelled after one step; then A's prompt and a prefix of it are asked for again.",
				submit(greedy("A", parts(x), 8), greedy("C", parts(seg(1, 8*b-2), seg(3, 4)), 8)),
				Event{Steps: 1},
				Event{Cancel: "A"},
				waitAll(),
				submit(greedy("A2", parts(x), 8), greedy("B", parts(seg(1, 5*b), seg(2, 3)), 8)),
			)
			sc.Cache.ChunkSize = 2 * b
			return sc, nil
		},
	},
	{
		Name:    "cancel-mid-decode",
		Summary: "cancel during decode, then re-request the prefix and the cancelled sequence's own tokens (freed blocks reused while indexed)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := seg(1, 2*b+3)
			return newScenario(fmt.Sprintf("A is cancelled after %d tokens (its third block full of generated tokens); then A's prompt and a prompt made of A's prompt and those tokens are asked for.", b+2),
				submit(greedy("A", parts(x), 40)),
				waitTokens("A", b+2),
				Event{Cancel: "A"},
				waitAll(),
				submit(
					expect(greedy("A2", parts(x), 12), ExpectHit),
					expect(greedy("B", parts(x, outputOf("A", 0, b+2), seg(2, 5)), 12), ExpectHit),
				),
			), nil
		},
	},
	{
		Name:    "chunked-prefill-shared",
		Summary: "chunked prefill with chunks that do not divide the block size while another request shares the prefix (reading half-written blocks)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			chunk := b + b/2 + 1
			if chunk%b == 0 {
				chunk++
			}
			sc := newScenario(fmt.Sprintf("Prefill in chunks of %d tokens (block size %d): A (6 blocks) and B (sharing A's first 4 blocks and 2 tokens) prefill together; then A's prompt and B's shared prefix are asked for again.", chunk, b),
				submit(greedy("A", parts(seg(1, 6*b+3)), 8), greedy("B", parts(seg(1, 4*b+2), seg(2, b)), 8)),
				waitAll(),
				submit(
					expect(greedy("C", parts(seg(1, 6*b+3)), 8), ExpectHit),
					expect(greedy("D", parts(seg(1, 4*b+2), seg(2, b/2)), 8), ExpectHit),
				),
			)
			sc.Cache.ChunkSize = chunk
			return sc, nil
		},
	},
	{
		Name:    "fork-partial-block",
		Summary: "n = 4 forks at a partial block with divergent seeded sampling (forks writing into the parent's block, copy-on-write)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := seg(1, 2*b+b/2-1)
			fork := Request{ID: "A", Prompt: parts(x), MaxTokens: 24, N: 4, IgnoreEOS: true,
				Sampling: &engine.Sampling{Temperature: 1, TopP: 1, Seed: 1234}}
			return newScenario(fmt.Sprintf("A's prompt ends inside block 2 (%d tokens); it forks into 4 sampled continuations; then B continues A's prompt plus continuation 2's first %d tokens, and C asks for A's prompt greedily.", 2*b+b/2, b),
				submit(fork),
				waitAll(),
				submit(
					expect(greedy("B", parts(x, outputOf("A", 2, b)), 12), ExpectHit),
					expect(greedy("C", parts(x), 12), ExpectHit),
				),
			), nil
		},
	},
	{
		Name:    "long-prompt",
		Summary: "prompts with positions past 1000, reused from the cache (RoPE positions after a hit, position arithmetic)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			shared := (1008/b + 1) * b // a whole number of blocks past position 1000
			long := shared + b/2 + 3
			if long+40+24 > p.Context {
				return nil, skipf("needs a context of %d tokens, the model has %d", long+64, p.Context)
			}
			if (long+64)/b+8 > p.Blocks {
				return nil, skipf("needs about %d blocks, the pool has %d", (long+64)/b+8, p.Blocks)
			}
			return newScenario(fmt.Sprintf("A has %d prompt tokens; then B shares A's first %d and continues past them, and C repeats A's prompt.", long+1, shared),
				submit(greedy("A", parts(seg(1, long)), 16)),
				waitAll(),
				submit(
					expect(greedy("B", parts(seg(1, shared-1), seg(2, 40)), 24), ExpectHit),
					expect(greedy("C", parts(seg(1, long)), 16), ExpectHit),
				),
			), nil
		},
	},
	{
		Name:    "stop-mid-block",
		Summary: "a stop string that ends generation inside a block, then reuse of the stopped sequence (blocks holding tokens after a stop)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := seg(1, 2*b+3)
			after := min(b/2+1, 17)
			a := greedy("A", parts(x), after+32)
			a.StopAfter = after
			return newScenario("A stops on a stop string (chosen when recording) that ends its output inside a block; then B continues A's prompt and output, and C repeats A.",
				submit(a),
				waitAll(),
				submit(
					expect(greedy("B", parts(x, outputOf("A", 0, 0), seg(2, 6)), 12), ExpectHit),
					expect(Request{ID: "C", Prompt: parts(x), MaxTokens: after + 32, IgnoreEOS: true, StopAfter: after}, ExpectHit),
				),
			), nil
		},
	},
	{
		Name:    "preempt-recompute",
		Summary: "preemption and recomputation when the pool runs out during decode (duplicated or dropped tokens)",
		build: func(p Params) (*Scenario, error) {
			if p.Reclaims {
				return nil, skipf("with a sliding window of %d every sequence holds at most %d blocks of %d, so decode cannot outgrow the pool here; the sliding suite's preempt-after-reclaim preempts sequences that slid", p.Window, ceilDiv(p.Window, p.BlockSize)+1, p.BlockSize)
			}
			t := p.tokens()
			prompt := max(p.BlockSize+1, t/8) - 1
			decode := t / 5
			if prompt+1+decode >= p.Context {
				decode = p.Context - prompt - 2
			}
			count := max(4, (13*t/10)/(prompt+1+decode)+1)
			if count*(prompt+1) > 3*t/4 {
				return nil, skipf("a pool of %d tokens with a context of %d cannot be outgrown by decode alone", t, p.Context)
			}
			var wave []Request
			for i := range count {
				wave = append(wave, greedy(fmt.Sprintf("P%d", i), parts(seg(uint64(i+1), prompt)), decode))
			}
			sc := newScenario(fmt.Sprintf("%d requests of %d prompt tokens decode %d tokens each together, outgrowing the pool of %d tokens, so later ones are preempted and recomputed; then the first prompt is asked for again.", count, prompt+1, decode, t),
				submit(wave...),
				waitAll(),
				submit(greedy("R", parts(seg(1, prompt)), 8)),
			)
			sc.Expect.Preemption = true
			return sc, nil
		},
	},
}

// WindowTooShortError refuses the sliding suite on a model whose window spans less than two
// blocks (Params.BlockSize): no block would ever fall wholly out of the window.
type WindowTooShortError struct {
	Window    int // the model's sliding window, in tokens
	BlockSize int // token slots per cache block
}

// Error gives the window, the block size and the largest block size that works.
func (e *WindowTooShortError) Error() string {
	return fmt.Sprintf("golden: the sliding suite needs the window (%d tokens) to span at least two blocks; the block size is %d (Params.BlockSize), at most %d works",
		e.Window, e.BlockSize, e.MaxBlockSize())
}

// MaxBlockSize is the largest block size the window spans twice.
func (e *WindowTooShortError) MaxBlockSize() int { return e.Window / 2 }
