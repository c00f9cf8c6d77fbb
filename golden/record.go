package golden

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// RecordOptions tune Record.
type RecordOptions struct {
	TopK       int       // log-probabilities kept per step (0: 5)
	FullLogits bool      // also keep every step's full logits (written as safetensors)
	Check      bool      // recompute every sequence without the cache and require bit-identical steps
	Threads    int       // worker threads (0: one per core)
	Context    int       // context length (0: the model's, at most engine.DefaultContext)
	Version    string    // kvref version to record (0: Version())
	Tolerance  Tolerance // base policy (zero: DefaultTolerance())
}

// DefaultTopK is how many log-probabilities a golden keeps per step unless told otherwise.
const DefaultTopK = 5

// Record runs a scenario through kvref's scheduler and paged cache and returns its golden.
// It fails when the run does not show what the scenario expects — a cache hit or miss a
// request expects, a preemption or eviction the scenario expects — since the scenario would
// then not exercise what it claims.
func Record(m *model.Model, info ModelInfo, sc *Scenario, opt RecordOptions) (*Golden, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if sc.Model != nil && sc.Model.SHA256 != "" && info.SHA256 != "" && !strings.EqualFold(sc.Model.SHA256, info.SHA256) {
		return nil, fmt.Errorf("golden: scenario %s was written for the model with SHA-256 %s, this model's is %s", sc.Name, sc.Model.SHA256, info.SHA256)
	}
	if opt.TopK <= 0 {
		opt.TopK = DefaultTopK
	}
	if opt.Version == "" {
		opt.Version = Version()
	}
	if opt.Tolerance == (Tolerance{}) {
		opt.Tolerance = DefaultTolerance()
	}
	var resolver *promptResolver
	cfg := runConfig{
		cache: sc.Cache, context: opt.Context, threads: opt.Threads, topK: opt.TopK, keepLogits: opt.FullLogits,
		prepare: func(run *engineRun, r Request) ([]int, []string, error) {
			prompt, err := resolver.resolve(r.Prompt)
			if err != nil {
				return nil, nil, err
			}
			if r.StopAfter == 0 {
				return prompt, r.Stop, nil
			}
			stop, err := chooseStop(m, run, prompt, r)
			if err != nil {
				return nil, nil, err
			}
			return prompt, []string{stop}, nil
		},
	}
	run, err := newEngineRun(m, sc, cfg)
	if err != nil {
		return nil, err
	}
	defer run.close()
	resolver, err = newPromptResolver(m.Tokenizer, m.Config.Vocab, sc.Seed, run.output)
	if err != nil {
		return nil, err
	}
	if err := run.run(); err != nil {
		return nil, err
	}
	reqs, err := run.results()
	if err != nil {
		return nil, err
	}
	info.SlidingWindow = m.Config.SlidingWindow
	g := &Golden{
		Format: GoldenFormat, KvrefVersion: opt.Version, Model: info, Scenario: *sc, TopK: opt.TopK,
		Tolerance: opt.Tolerance, Stats: run.stats(), Requests: reqs,
	}
	if err := checkExpectations(g, run); err != nil {
		return nil, err
	}
	kType, vType, _ := sc.Cache.Types()
	if opt.Check {
		if err := checkAgainstReference(run.eng.Runner(), g, kType, vType); err != nil {
			return nil, err
		}
	}
	if kType != quant.F32 || vType != quant.F32 {
		qe, err := quantizationError(run.eng.Runner(), g)
		if err != nil {
			return nil, err
		}
		g.Tolerance.QuantizationError = qe
	}
	g.Tolerance.Policy = g.Tolerance.describe()
	if opt.FullLogits {
		g.logits = map[string][][][]float32{}
		for _, rr := range run.reqs {
			g.logits[rr.spec.ID] = rr.logits
		}
	}
	return g, nil
}

// checkExpectations fails when kvref's own run did not show what the scenario expects.
func checkExpectations(g *Golden, run *engineRun) error {
	sc := &g.Scenario
	for i, r := range g.Requests {
		switch {
		case r.ExpectCache == ExpectHit && r.CachedTokens == 0:
			return fmt.Errorf("golden: scenario %s: request %s expects a prefix-cache hit but kvref's own run had none; the scenario does not exercise what it claims with block size %d and %d blocks",
				sc.Name, r.ID, sc.Cache.BlockSize, sc.Cache.Blocks)
		case r.ExpectCache == ExpectMiss && r.CachedTokens > 0:
			return fmt.Errorf("golden: scenario %s: request %s expects a cache miss but kvref's own run reused %d tokens; the scenario does not exercise what it claims with block size %d and %d blocks (a larger pool keeps the prefix)",
				sc.Name, r.ID, r.CachedTokens, sc.Cache.BlockSize, sc.Cache.Blocks)
		}
		if run.reqs[i].spec.StopAfter > 0 && r.Choices[0].FinishReason != "stop" {
			return fmt.Errorf("golden: scenario %s: request %s was given the stop string %q but finished by %s", sc.Name, r.ID, r.Stop[0], r.Choices[0].FinishReason)
		}
	}
	switch e := sc.Expect; {
	case e.Preemption && g.Stats.Preemptions == 0:
		return fmt.Errorf("golden: scenario %s expects a preemption but kvref's own run had none with %d blocks of %d tokens", sc.Name, sc.Cache.Blocks, sc.Cache.BlockSize)
	case e.Eviction && g.Stats.Evictions == 0:
		return fmt.Errorf("golden: scenario %s expects an eviction but kvref's own run had none with %d blocks of %d tokens", sc.Name, sc.Cache.Blocks, sc.Cache.BlockSize)
	case (e.Reclaim || e.PreemptionAfterReclaim) && slideWindow(run.eng) == 0:
		return fmt.Errorf("golden: scenario %s expects blocks released by a sliding window, but the model %s: record it on a model whose every layer has a sliding window (a model/synth Shape with SlidingWindow set)",
			sc.Name, noReclaimReason(run.eng.Model().Config.SlidingWindow))
	case e.Reclaim && g.Stats.BlocksReclaimed == 0:
		return fmt.Errorf("golden: scenario %s expects blocks released by the sliding window, but kvref's own run released none (window %d, blocks of %d)", sc.Name, g.Model.SlidingWindow, sc.Cache.BlockSize)
	case e.PreemptionAfterReclaim && !run.preemptedAfterReclaim:
		return fmt.Errorf("golden: scenario %s expects a sequence preempted after it released blocks it slid past, but kvref's own run had %d preemptions, none of them after a release (%d blocks of %d tokens, window %d)",
			sc.Name, g.Stats.Preemptions, sc.Cache.Blocks, sc.Cache.BlockSize, g.Model.SlidingWindow)
	case e.EvictionsIn == "sliding" && (run.hits.evictionsSliding == 0 || run.hits.evictionsFull > 0):
		return fmt.Errorf("golden: scenario %s expects evictions only in the sliding cache groups, but kvref's own run evicted %d blocks of sliding groups and %d of full ones (%d blocks of %d tokens)",
			sc.Name, run.hits.evictionsSliding, run.hits.evictionsFull, sc.Cache.Blocks, sc.Cache.BlockSize)
	}
	if sh := sc.Expect.ShortHit; sh != nil {
		r := g.Request(sh.Request)
		if r == nil || r.CachedTokens == 0 || r.CachedTokens >= sh.Below {
			got := -1
			if r != nil {
				got = r.CachedTokens
			}
			return fmt.Errorf("golden: scenario %s expects request %s to hit fewer than the %d tokens its full cache groups hold (its sliding groups' blocks for them were evicted), and more than 0; kvref's own run reused %d (%d blocks of %d tokens)",
				sc.Name, sh.Request, sh.Below, got, sc.Cache.Blocks, sc.Cache.BlockSize)
		}
	}
	return nil
}

// noReclaimReason says why a model releases no block: no window at all, or layers that
// attend over every position.
func noReclaimReason(window int) string {
	if window == 0 {
		return "has no sliding window"
	}
	return fmt.Sprintf("has a window of %d only in some layers (the others attend over every position), so no block leaves every layer's window", window)
}

// chooseStop picks a stop string that ends the request's greedy output after StopAfter
// tokens, or a few tokens later: the shortest valid UTF-8 suffix of the output text that
// ends with the last token's piece and does not occur earlier. Outputs whose stop would
// leave the sequence exactly at a block boundary are skipped, so the stop ends mid-block.
// The greedy continuation is computed on a separate engine so the scenario's cache is not
// touched.
func chooseStop(m *model.Model, run *engineRun, prompt []int, r Request) (string, error) {
	bs := run.sc.Cache.BlockSize
	kType, vType, _ := run.sc.Cache.Types()
	eng, err := engine.New(m, engine.Config{Context: run.eng.Context(), BlockSize: bs, Threads: run.cfg.threads, KType: kType, VType: vType})
	if err != nil {
		return "", err
	}
	defer eng.Close()
	limit := min(r.MaxTokens, r.StopAfter+2*bs)
	res, err := eng.Generate(engine.Request{Prompt: prompt, MaxTokens: limit, IgnoreEOS: r.IgnoreEOS}, func(engine.Token) error { return nil })
	if err != nil {
		return "", err
	}
	out := res.Outputs[0]
	ends := make([]int, len(out)+1) // ends[k]: bytes of the text of out[:k]
	var text []byte
	for i, id := range out {
		text = append(text, m.Tokenizer.Piece(id)...)
		ends[i+1] = len(text)
	}
	for k := r.StopAfter; k <= len(out); k++ {
		if (len(prompt)+k)%bs == 0 || ends[k] == ends[k-1] {
			continue
		}
		prev := string(text[:ends[k-1]])
		for l := 1; l <= ends[k]; l++ {
			s := string(text[ends[k]-l : ends[k]])
			if !utf8.ValidString(s) || strings.TrimSpace(s) == "" || strings.Contains(prev, s) {
				continue
			}
			return s, nil
		}
	}
	return "", fmt.Errorf("no stop string ends the greedy output mid-block within %d tokens after token %d", 2*bs, r.StopAfter)
}

// checkAgainstReference recomputes every recorded continuation with the cache-free
// reference forward (one pass over the whole sequence) and requires every step — chosen
// token, log-probability, margin and top-k — to be identical. kvref's cached logits are
// bit-identical to the reference's, so any difference is a kvref bug and the golden is not
// written.
func checkAgainstReference(runner *model.Runner, g *Golden, kType, vType quant.CacheType) error {
	for _, r := range g.Requests {
		if len(r.PromptSteps) > 0 {
			ref, err := runner.Reference(r.PromptIDs[:len(r.PromptIDs)-1], kType, vType, 0)
			if err != nil {
				return err
			}
			for i, s := range r.PromptSteps {
				if want := newStep(ref[i], r.PromptIDs[i+1], g.TopK); !reflect.DeepEqual(s, want) {
					return fmt.Errorf("golden: scenario %s request %s prompt token %d: the cached run's prompt log-probabilities differ from the cache-free reference (%+v vs %+v): a kvref bug, no golden written",
						g.Scenario.Name, r.ID, i+1, s, want)
				}
			}
		}
		for _, c := range r.Choices {
			if len(c.Steps) == 0 {
				continue
			}
			tokens := append(slices.Clone(r.PromptIDs), c.OutputIDs[:len(c.OutputIDs)-1]...)
			ref, err := runner.Reference(tokens, kType, vType, len(r.PromptIDs)-1)
			if err != nil {
				return err
			}
			for i, s := range c.Steps {
				want := newStep(ref[i], s.ID, g.TopK)
				if !reflect.DeepEqual(s, want) {
					return fmt.Errorf("golden: scenario %s request %s continuation %d step %d (position %d): the cached run differs from the cache-free reference (%+v vs %+v): a kvref bug, no golden written",
						g.Scenario.Name, r.ID, c.Index, i, len(r.PromptIDs)+i, s, want)
				}
			}
		}
	}
	return nil
}

// quantizationError returns the largest difference, along the golden's own histories,
// between the log-probabilities of the golden's cache type and of an f32 cache, over the
// tokens a comparison looks at: the top 2k of either distribution.
func quantizationError(runner *model.Runner, g *Golden) (float64, error) {
	worst := 0.0
	kType, vType, _ := g.Scenario.Cache.Types()
	for _, r := range g.Requests {
		for _, c := range r.Choices {
			if len(c.Steps) == 0 {
				continue
			}
			tokens := append(slices.Clone(r.PromptIDs), c.OutputIDs[:len(c.OutputIDs)-1]...)
			from := len(r.PromptIDs) - 1
			q, err := runner.Reference(tokens, kType, vType, from)
			if err != nil {
				return 0, err
			}
			f, err := runner.Reference(tokens, quant.F32, quant.F32, from)
			if err != nil {
				return 0, err
			}
			for i := range c.Steps {
				worst = math.Max(worst, stepQuantizationError(LogSoftmax(q[i]), LogSoftmax(f[i]), 2*g.TopK, nil))
			}
		}
	}
	return worst, nil
}

// stepQuantizationError is the largest |lq − lf| over the top k tokens of either
// distribution and the extra ids.
func stepQuantizationError(lq, lf []float64, k int, extra []int) float64 {
	worst := 0.0
	for _, ids := range [][]Logprob{TopK(lq, k), TopK(lf, k)} {
		for _, t := range ids {
			worst = math.Max(worst, math.Abs(lq[t.ID]-lf[t.ID]))
		}
	}
	for _, id := range extra {
		if id >= 0 && id < len(lq) {
			worst = math.Max(worst, math.Abs(lq[id]-lf[id]))
		}
	}
	return worst
}

// ReplayOptions tune Replay.
type ReplayOptions struct {
	Cache   *Cache // cache configuration to replay with (nil: the golden's)
	Threads int
	Context int
	TopK    int // log-probabilities per step (0: the golden's)
}

// Replay runs a golden's scenario — its exact prompts and stop strings — through kvref
// again, possibly with another block size, pool size or chunk size, and returns the result
// as a candidate. kvref's numeric contract makes the result bit-identical to the golden
// whatever the cache configuration, so this is both kvref's self-test and an example of a
// candidate dump.
func Replay(m *model.Model, g *Golden, opt ReplayOptions) (*CandidateScenario, error) {
	cache := g.Scenario.Cache
	if opt.Cache != nil {
		cache = *opt.Cache
	}
	if opt.TopK <= 0 {
		opt.TopK = g.TopK
	}
	cfg := runConfig{
		cache: cache, context: opt.Context, threads: opt.Threads, topK: opt.TopK,
		prepare: func(_ *engineRun, r Request) ([]int, []string, error) {
			gr := g.Request(r.ID)
			if gr == nil {
				return nil, nil, fmt.Errorf("the golden has no request %s", r.ID)
			}
			return gr.PromptIDs, gr.Stop, nil
		},
	}
	run, err := newEngineRun(m, &g.Scenario, cfg)
	if err != nil {
		return nil, err
	}
	defer run.close()
	if err := run.run(); err != nil {
		return nil, err
	}
	reqs, err := run.results()
	if err != nil {
		return nil, err
	}
	cs := &CandidateScenario{Name: g.Scenario.Name, Requests: map[string]*CandidateRequest{}}
	for _, r := range reqs {
		cached, prompt := r.CachedTokens, len(r.PromptIDs)
		cr := &CandidateRequest{ID: r.ID, CachedTokens: &cached, CacheEvidence: EvidenceKvref, PromptTokens: &prompt, Cancelled: r.Cancelled}
		for _, c := range r.Choices {
			steps := make([]CandidateStep, len(c.Steps))
			for i, s := range c.Steps {
				lp := s.Logprob
				steps[i] = CandidateStep{Step: i, ID: s.ID, Logprob: &lp, Top: s.Top}
			}
			cr.Choices = append(cr.Choices, steps)
			cr.FinishReasons = append(cr.FinishReasons, c.FinishReason)
		}
		if r.PromptSteps != nil {
			cr.PromptSteps = make([]CandidateStep, len(r.PromptSteps))
			for i, s := range r.PromptSteps {
				lp := s.Logprob
				cr.PromptSteps[i] = CandidateStep{Step: i + 1, ID: s.ID, Logprob: &lp, Top: s.Top}
			}
		}
		cs.Requests[r.ID] = cr
	}
	return cs, nil
}
