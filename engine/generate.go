package engine

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
)

// Request is one prompt to continue.
type Request struct {
	Prompt    []int    // token ids, BOS included when the model wants one
	MaxTokens int      // tokens to generate per sequence; < 0: until EOS or the context is full
	IgnoreEOS bool     // keep going past end-of-generation tokens
	Sampling  Sampling // sampling parameters (sequence i of n uses a seed derived from Seed and i)
	N         int      // parallel continuations forked from the prompt (≤ 1: one)
	Check     bool     // compare every step's logits bit for bit with the cache-free reference
}

// Token is one generated token and the logits it was chosen from.
type Token struct {
	Seq    int       // index of the continuation within the request (0..N-1)
	Step   int       // 0 for the first generated token
	Pos    int       // position of the token in its sequence
	ID     int       // the chosen token
	Logits []float32 // the raw logits it was sampled from
}

// Result summarises a finished request.
type Result struct {
	Outputs         [][]int       // generated ids, per continuation
	StopReasons     []string      // "eos", "length" or "context", per continuation
	PromptTokens    int           // tokens in the prompt
	PrefixHitTokens int           // prompt tokens whose K/V came from the cache
	Prefill         time.Duration // time to the first logits
	Decode          time.Duration // time of all later steps
	Steps           int           // forward passes after the prefill
	Cache           kvcache.Stats // the pool just before the request's sequences were freed
}

// CheckError reports cached logits that differ from the cache-free reference.
type CheckError struct {
	Seq, Step, Pos int
	Index          int     // first logit index that differs
	MaxAbsDiff     float64 // largest absolute difference over the vocabulary
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("check failed: sequence %d step %d (position %d): cached logits differ from the cache-free reference (first at token %d, max |Δ| = %g)",
		e.Seq, e.Step, e.Pos, e.Index, e.MaxAbsDiff)
}

// seedFor derives continuation i's sampling seed from the request's seed; continuation 0
// uses the seed itself, so -np 1 samples exactly like a plain run.
func seedFor(seed uint64, i int) uint64 { return seed + uint64(i)*0x9e3779b97f4a7c15 }

// Validate checks a request against the engine's limits before anything is allocated.
func (e *Engine) Validate(req Request) error {
	p := len(req.Prompt)
	vocab := e.Model.Config.Vocab
	switch {
	case p == 0:
		return errors.New("engine: empty prompt: there is no token to start from (use a prompt, or a model that adds BOS)")
	case p >= e.Context:
		return fmt.Errorf("engine: prompt has %d tokens but the context holds %d; shorten the prompt or raise -c (the model was trained for %d)", p, e.Context, e.Model.Config.Context)
	case req.MaxTokens > 0 && p+req.MaxTokens > e.Context:
		return fmt.Errorf("engine: prompt (%d tokens) + %d new tokens exceed the context of %d; lower -n or raise -c", p, req.MaxTokens, e.Context)
	}
	for i, t := range req.Prompt {
		if t < 0 || t >= vocab {
			return fmt.Errorf("engine: prompt token %d at position %d is outside the vocabulary of %d", t, i, vocab)
		}
	}
	cfg := e.Pool.Config()
	if need := cfg.BlocksFor(p + 1); need > cfg.NumBlocks {
		return fmt.Errorf("engine: the cache is too small: the prompt alone needs %d blocks of %d tokens, the pool has %d; raise --cache-blocks or shorten the prompt", need, cfg.BlockSize, cfg.NumBlocks)
	}
	return nil
}

// Generate runs a request: prefill (reusing cached prefix blocks), then decode steps in
// which all continuations advance together in one batched forward pass. emit is called for
// every token in order; an error from emit stops generation. The request's sequences are
// freed at the end (their full blocks stay cached for later prefix hits).
func (e *Engine) Generate(req Request, emit func(Token) error) (res Result, err error) {
	if err := e.Validate(req); err != nil {
		return Result{}, err
	}
	n := max(req.N, 1)
	pool := e.Pool
	res = Result{PromptTokens: len(req.Prompt), Outputs: make([][]int, n), StopReasons: make([]string, n)}

	// Prefill: everything after the cached prefix, logits for the last token only.
	start := time.Now()
	root := pool.AddSequence(req.Prompt)
	seqs := []*kvcache.Sequence{root}
	defer func() {
		res.Cache = pool.Stats()
		for _, s := range seqs {
			pool.Free(s)
		}
	}()
	res.PrefixHitTokens = root.Computed()
	logits, err := e.Step([]*kvcache.Sequence{root})
	if err != nil {
		return res, err
	}
	res.Prefill = time.Since(start)

	// Fork the continuations; they share every block until they write.
	for i := 1; i < n; i++ {
		seqs = append(seqs, pool.Fork(root))
		logits = append(logits, logits[0])
	}
	samplers := make([]*Sampler, n)
	for i := range samplers {
		p := req.Sampling
		p.Seed = seedFor(p.Seed, i)
		samplers[i] = NewSampler(p)
	}

	if req.MaxTokens == 0 {
		for i := range res.StopReasons {
			res.StopReasons[i] = "length"
		}
		return res, nil
	}
	eog := e.Model.Tokenizer.IsEOG
	start = time.Now()
	live := make([]int, n) // indices of continuations still generating
	for i := range live {
		live[i] = i
	}
	checks := make([]checker, n)
	for step := 0; len(live) > 0; step++ {
		var next []*kvcache.Sequence
		var nextIdx []int
		for _, i := range live {
			s := seqs[i]
			if req.Check {
				if err := checks[i].add(e, s, i, step, logits[i]); err != nil {
					return res, err
				}
			}
			tok := samplers[i].Sample(logits[i])
			res.Outputs[i] = append(res.Outputs[i], tok)
			if err := emit(Token{Seq: i, Step: step, Pos: s.Len(), ID: tok, Logits: logits[i]}); err != nil {
				return res, err
			}
			switch {
			case eog(tok) && !req.IgnoreEOS:
				res.StopReasons[i] = "eos"
			case req.MaxTokens >= 0 && len(res.Outputs[i]) >= req.MaxTokens:
				res.StopReasons[i] = "length"
			case s.Len()+1 >= e.Context:
				res.StopReasons[i] = "context"
			default:
				s.Append(tok)
				next = append(next, s)
				nextIdx = append(nextIdx, i)
				continue
			}
			if err := checks[i].flush(e, s); err != nil {
				return res, err
			}
		}
		if len(next) == 0 {
			break
		}
		out, err := e.Step(next)
		if err != nil {
			return res, err
		}
		res.Steps++
		for j, i := range nextIdx {
			logits[i] = out[j]
		}
		live = nextIdx
	}
	res.Decode = time.Since(start)
	return res, nil
}

// Step computes every uncomputed token of the given sequences in one batched forward pass
// (prefill chunks and decode tokens together) and returns each sequence's logits at its last
// token. Blocks are reserved first; if the pool runs out, the error wraps
// kvcache.ErrOutOfBlocks, nothing is computed, and the sequences may keep blocks already
// reserved for them (still consistent, reused by the next attempt).
func (e *Engine) Step(seqs []*kvcache.Sequence) ([][]float32, error) {
	pool := e.Pool
	var rows []model.Row
	for _, s := range seqs {
		n := s.Len() - s.Computed()
		if n <= 0 {
			return nil, fmt.Errorf("engine: sequence %d has no uncomputed token to run", s.ID())
		}
		if err := pool.Reserve(s, n); err != nil {
			return nil, fmt.Errorf("engine: %w; raise --cache-blocks or lower -n/-np", err)
		}
		for pos := s.Computed(); pos < s.Len(); pos++ {
			rows = append(rows, model.Row{Seq: s, Pos: pos, Logits: pos == s.Len()-1})
		}
	}
	out, err := e.Runner.Forward(pool, rows)
	if err != nil {
		return nil, err
	}
	var logits [][]float32
	for b, row := range rows {
		if row.Logits {
			logits = append(logits, out[b])
		}
	}
	for _, s := range seqs {
		if err := pool.Commit(s, s.Len()-s.Computed()); err != nil {
			return nil, err
		}
	}
	return logits, nil
}

// checkWindow is how many steps of one sequence are checked together: one cache-free pass
// over the sequence recomputes the logits of all of them, so checking n steps costs
// O(n²/checkWindow) rows instead of O(n²).
const checkWindow = 32

// checker collects a sequence's steps and compares them, a window at a time, with the
// cache-free reference at the same positions.
type checker struct {
	pending []pendingCheck
}

type pendingCheck struct {
	seq, step, pos int
	logits         []float32
}

// add records the logits the cached path produced at the sequence's last computed
// position, checking the window when it is full.
func (c *checker) add(e *Engine, s *kvcache.Sequence, seq, step int, logits []float32) error {
	c.pending = append(c.pending, pendingCheck{seq: seq, step: step, pos: s.Computed() - 1, logits: logits})
	if len(c.pending) < checkWindow {
		return nil
	}
	return c.flush(e, s)
}

// flush recomputes the pending positions with no cache and requires bit-for-bit equality,
// reporting the first step that differs.
func (c *checker) flush(e *Engine, s *kvcache.Sequence) error {
	if len(c.pending) == 0 {
		return nil
	}
	cfg := e.Pool.Config()
	last := c.pending[len(c.pending)-1].pos
	from := c.pending[0].pos
	ref, err := e.Runner.Reference(s.Tokens()[:last+1], cfg.KType, cfg.VType, from)
	if err != nil {
		return err
	}
	for _, p := range c.pending {
		if err := Compare(p.logits, ref[p.pos-from], p.seq, p.step, p.pos); err != nil {
			return err
		}
	}
	c.pending = c.pending[:0]
	return nil
}

// Compare returns a *CheckError unless got and want are bit-for-bit equal.
func Compare(got, want []float32, seq, step, pos int) error {
	first := -1
	maxDiff := 0.0
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if first < 0 {
				first = i
			}
			maxDiff = math.Max(maxDiff, math.Abs(float64(got[i])-float64(want[i])))
		}
	}
	if first < 0 && len(got) == len(want) {
		return nil
	}
	return &CheckError{Seq: seq, Step: step, Pos: pos, Index: first, MaxAbsDiff: maxDiff}
}
