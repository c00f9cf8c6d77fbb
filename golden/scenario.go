package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/quant"
)

// The format strings that open every file this package reads or writes.
const (
	ScenarioFormat  = "kvref-scenario/1"
	GoldenFormat    = "kvref-golden/1"
	ManifestFormat  = "kvref-golden-suite/1"
	CandidateFormat = "kvref-candidate/1"
)

// Scenario is an ordered list of events run against a KV cache, and the cache
// configuration kvref uses for it on the reference side.
type Scenario struct {
	Format      string    `json:"format"`
	Name        string    `json:"name"`                  // unique in a suite; also the golden's file name
	Class       string    `json:"class,omitempty"`       // the class of cache bug it exercises
	Description string    `json:"description,omitempty"` // what it does, in a sentence or two
	Seed        uint64    `json:"seed"`                  // mixed into every seeded prompt part
	Model       *ModelRef `json:"model,omitempty"`       // the model it was written for (optional)
	Cache       Cache     `json:"cache"`
	Expect      Expect    `json:"expect,omitzero"`
	Events      []Event   `json:"events"`
}

// ModelRef names a model file and, optionally, its SHA-256 so that a golden is never
// compared with a run of another model.
type ModelRef struct {
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Cache is the reference side's cache and scheduler configuration for a scenario.
type Cache struct {
	BlockSize      int    `json:"block_size"`
	Blocks         int    `json:"cache_blocks"`
	TypeK          string `json:"cache_type_k"`
	TypeV          string `json:"cache_type_v"`
	ChunkSize      int    `json:"chunk_size,omitempty"`       // most prefill tokens of one sequence per step (0: no chunking)
	MaxBatchTokens int    `json:"max_batch_tokens,omitempty"` // tokens per step (0: the scheduler's default)
}

// Types parses the cache element types.
func (c Cache) Types() (k, v quant.CacheType, err error) {
	if k, err = quant.ParseCacheType(c.TypeK); err != nil {
		return 0, 0, err
	}
	if v, err = quant.ParseCacheType(c.TypeV); err != nil {
		return 0, 0, err
	}
	return k, v, nil
}

// TypeName is "f16" when keys and values share a type, else "K/V" such as "q8_0/f16".
func (c Cache) TypeName() string {
	if c.TypeK == c.TypeV {
		return c.TypeK
	}
	return c.TypeK + "/" + c.TypeV
}

// Expect states what the reference run must show for the scenario to exercise what it
// claims; Record fails when kvref's own run does not show it (a scenario too small for its
// pool, say).
type Expect struct {
	Preemption bool `json:"preemption,omitempty"` // at least one sequence is preempted and recomputed
	Eviction   bool `json:"eviction,omitempty"`   // at least one cached block is evicted
	// Reclaim: at least one block is released because every layer's sliding window has
	// moved past it (the model must have such a window).
	Reclaim bool `json:"reclaim,omitempty"`
	// PreemptionAfterReclaim: at least one sequence is preempted after it released blocks
	// it had slid past, so its recomputation starts from a table with holes freed.
	PreemptionAfterReclaim bool `json:"preemption_after_reclaim,omitempty"`
	// EvictionsIn "sliding": the model has cache groups, at least one block is evicted and
	// every evicted block is a sliding group's (eviction pressure falls on one kind of
	// group).
	EvictionsIn string `json:"evictions_in,omitempty"`
	// ShortHit: a request whose hit is shorter than the prefix its full cache groups hold,
	// because the sliding groups' blocks for the longer hit were evicted (and longer than 0).
	ShortHit *ShortHit `json:"short_hit,omitempty"`
}

// ShortHit names a request and the prefix (tokens) its full cache groups hold: kvref's hit
// must be shorter, and not 0.
type ShortHit struct {
	Request string `json:"request"`
	Below   int    `json:"below"`
}

// Event is one step of a scenario. Exactly one field is set.
type Event struct {
	Submit []Request `json:"submit,omitempty"` // a wave: every request is submitted before the next scheduler step
	Wait   *Wait     `json:"wait,omitempty"`   // run until a condition holds
	Cancel string    `json:"cancel,omitempty"` // cancel a request (an HTTP target closes its connection)
	Steps  int       `json:"steps,omitempty"`  // run this many scheduler steps (a short pause on an HTTP target)
	Flush  bool      `json:"flush,omitempty"`  // drop every cached, unreferenced block (kvcache.Pool.Flush)
}

// Wait runs the scheduler until request Request has produced Tokens tokens in its first
// continuation (or has finished), or, with Tokens 0, until it has finished; with no
// Request, until every submitted request has finished.
type Wait struct {
	Request string `json:"request,omitempty"`
	Tokens  int    `json:"tokens,omitempty"`
}

// Request is one completion request of a scenario.
type Request struct {
	ID          string           `json:"id"` // unique within the scenario
	Prompt      Prompt           `json:"prompt"`
	MaxTokens   int              `json:"max_tokens"`
	N           int              `json:"n,omitempty"`        // parallel continuations (forks); 0 and 1 mean one
	Sampling    *engine.Sampling `json:"sampling,omitempty"` // nil: greedy (temperature 0)
	IgnoreEOS   bool             `json:"ignore_eos,omitempty"`
	Stop        []string         `json:"stop,omitempty"`         // stop strings
	StopAfter   int              `json:"stop_after,omitempty"`   // Record picks a stop string that ends the greedy output after this many tokens
	ExpectCache string           `json:"expect_cache,omitempty"` // "hit", "miss" or "" (no expectation)
	// PromptLogprobs asks for the log-probabilities of every prompt token after the first
	// (OpenAI's echo with logprobs; vLLM's prompt_logprobs), recorded as the golden
	// request's prompt_steps. With it, max_tokens may be 0: the prompt is scored, nothing
	// generated.
	PromptLogprobs bool `json:"prompt_logprobs,omitempty"`
}

// Choices is the number of continuations the request asks for.
func (r Request) Choices() int { return max(r.N, 1) }

// Greedy reports whether the request samples greedily.
func (r Request) Greedy() bool { return r.Sampling == nil || r.Sampling.Greedy() }

// sampling returns the engine's sampling parameters (greedy when none are given).
func (r Request) sampling() engine.Sampling {
	if r.Sampling == nil {
		return engine.Sampling{}
	}
	return *r.Sampling
}

// The cache expectations of a request.
const (
	ExpectHit  = "hit"  // some of its prompt should come from the cache
	ExpectMiss = "miss" // none of its prompt should (its prefix was evicted or never cached)
)

var scenarioName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// Validate checks a scenario's structure: a usable name, a valid cache configuration,
// exactly one action per event, unique request ids, and references only to requests
// submitted earlier.
func (s *Scenario) Validate() error {
	if s.Format != ScenarioFormat {
		return fmt.Errorf("golden: scenario %q has format %q, want %q", s.Name, s.Format, ScenarioFormat)
	}
	if !scenarioName.MatchString(s.Name) {
		return fmt.Errorf("golden: scenario name %q must start with a letter or digit and use only letters, digits and . _ + -", s.Name)
	}
	errf := func(format string, args ...any) error {
		return fmt.Errorf("golden: scenario %s: "+format, append([]any{s.Name}, args...)...)
	}
	c := s.Cache
	if c.BlockSize < 1 || c.Blocks < 1 {
		return errf("cache needs block_size ≥ 1 and cache_blocks ≥ 1, got %d and %d", c.BlockSize, c.Blocks)
	}
	if c.ChunkSize < 0 || c.MaxBatchTokens < 0 {
		return errf("chunk_size and max_batch_tokens must be ≥ 0, got %d and %d", c.ChunkSize, c.MaxBatchTokens)
	}
	if _, _, err := c.Types(); err != nil {
		return errf("%v", err)
	}
	if len(s.Events) == 0 {
		return errf("no events")
	}
	submitted := map[string]bool{}
	for i, e := range s.Events {
		actions := 0
		if len(e.Submit) > 0 {
			actions++
		}
		if e.Wait != nil {
			actions++
		}
		if e.Cancel != "" {
			actions++
		}
		if e.Steps != 0 {
			actions++
		}
		if e.Flush {
			actions++
		}
		if actions != 1 {
			return errf("event %d must have exactly one of submit, wait, cancel, steps, flush; it has %d", i, actions)
		}
		switch {
		case e.Steps < 0:
			return errf("event %d: steps must be > 0, got %d", i, e.Steps)
		case e.Cancel != "" && !submitted[e.Cancel]:
			return errf("event %d cancels request %q, which has not been submitted", i, e.Cancel)
		case e.Wait != nil && e.Wait.Request != "" && !submitted[e.Wait.Request]:
			return errf("event %d waits for request %q, which has not been submitted", i, e.Wait.Request)
		case e.Wait != nil && (e.Wait.Tokens < 0 || e.Wait.Tokens > 0 && e.Wait.Request == ""):
			return errf("event %d: wait.tokens must be ≥ 0 and needs wait.request", i)
		}
		for _, r := range e.Submit {
			if err := r.validate(submitted); err != nil {
				return errf("event %d: %v", i, err)
			}
		}
		for _, r := range e.Submit {
			submitted[r.ID] = true
		}
	}
	return nil
}

func (r Request) validate(submitted map[string]bool) error {
	if r.ID == "" {
		return fmt.Errorf("a request has no id")
	}
	if submitted[r.ID] {
		return fmt.Errorf("request id %q is used twice (give a re-request its own id)", r.ID)
	}
	switch {
	case r.MaxTokens == 0 && r.PromptLogprobs && r.Choices() == 1 && r.StopAfter == 0:
	case r.MaxTokens == 0 && r.PromptLogprobs:
		return fmt.Errorf("request %s: max_tokens 0 (score the prompt) needs n 1 and no stop_after", r.ID)
	case r.MaxTokens < 1:
		return fmt.Errorf("request %s: max_tokens must be ≥ 1 (0 only with prompt_logprobs), got %d", r.ID, r.MaxTokens)
	}
	if r.N < 0 {
		return fmt.Errorf("request %s: n must be ≥ 0, got %d", r.ID, r.N)
	}
	if r.StopAfter < 0 || r.StopAfter > 0 && (!r.Greedy() || r.Choices() > 1 || len(r.Stop) > 0) {
		return fmt.Errorf("request %s: stop_after needs a greedy single-continuation request without explicit stop strings", r.ID)
	}
	if r.StopAfter > r.MaxTokens {
		return fmt.Errorf("request %s: stop_after %d exceeds max_tokens %d", r.ID, r.StopAfter, r.MaxTokens)
	}
	switch r.ExpectCache {
	case "", ExpectHit, ExpectMiss:
	default:
		return fmt.Errorf("request %s: expect_cache must be %q, %q or empty, got %q", r.ID, ExpectHit, ExpectMiss, r.ExpectCache)
	}
	return r.Prompt.validate(r.ID, submitted)
}

// Requests returns every request of the scenario in submission order.
func (s *Scenario) Requests() []Request {
	var out []Request
	for _, e := range s.Events {
		out = append(out, e.Submit...)
	}
	return out
}

// ParseScenario decodes and validates a scenario file. Unknown fields are errors, so that
// a misspelt key is not silently ignored.
func ParseScenario(data []byte) (*Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("golden: scenario: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// LoadScenario reads and validates a scenario file.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseScenario(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
