package golden

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
	"github.com/kvref/kvref/tokenizer"
)

// TestSuitesBuildForManyParameters builds both suites over block sizes, pool sizes and
// contexts: every scenario validates, names are unique, the default suite is part of the
// full one, and classes that do not fit are skipped with a reason instead of failing.
func TestSuitesBuildForManyParameters(t *testing.T) {
	for _, p := range []Params{
		DefaultParams(), tinyParams,
		{BlockSize: 2, Blocks: 8, Context: 64},
		{BlockSize: 3, Blocks: 100, Context: 512},
		{BlockSize: 32, Blocks: 64, Context: 4096},
		{BlockSize: 256, Blocks: 16, Context: 4096},
	} {
		full, _, err := Suite("full", p)
		require.NoError(t, err, "%+v", p)
		names := map[string]bool{}
		for _, s := range full {
			require.NoError(t, s.Validate())
			require.False(t, names[s.Name], "duplicate %s", s.Name)
			names[s.Name] = true
			require.Equal(t, p.BlockSize, s.Cache.BlockSize)
			require.Equal(t, p.Blocks, s.Cache.Blocks)
			require.True(t, strings.HasPrefix(s.Name, s.Class+"."), s.Name)
		}
		def, skipped, err := Suite("default", p)
		require.NoError(t, err)
		require.NotEmpty(t, def)
		for _, s := range def {
			require.True(t, names[s.Name], "%s is in default but not full", s.Name)
		}
		for _, s := range skipped {
			require.NotEmpty(t, s.Reason)
		}
	}
}

// TestLibraryCoversTheIssueClasses pins the classes the library must have.
func TestLibraryCoversTheIssueClasses(t *testing.T) {
	var names []string
	for _, c := range Classes() {
		names = append(names, c.Name)
		require.NotEmpty(t, c.Summary)
	}
	require.Equal(t, []string{
		"mixed-hits-misses", "block-boundary-lengths", "prefix-diverges-mid-block", "same-step-shared-prefix",
		"identical-requests", "evict-then-rerequest", "cancel-mid-prefill", "cancel-mid-decode",
		"chunked-prefill-shared", "fork-partial-block", "long-prompt", "stop-mid-block", "preempt-recompute",
		"prompt-logprobs-full-hit", "prompt-logprobs-partial-hit", "prompt-logprobs-two-orders", "prompt-logprobs-block-aligned",
		"window-crossing-block-boundary", "window-crossing-mid-block", "shared-prefix-slid-past", "preempt-after-reclaim",
		"hybrid-hit-longer-than-window", "hybrid-hit-shortened", "hybrid-eviction-in-one-group", "hybrid-preempt-across-window",
		"hybrid-fork-across-window", "hybrid-chunked-prefill-across-window",
	}, names)
	general := 0
	for _, c := range Classes() {
		if !c.Sliding && !c.Hybrid {
			general++
		}
	}

	def, skipped, err := Suite("default", DefaultParams())
	require.NoError(t, err)
	require.Empty(t, skipped, "the default parameters fit every class")
	types := map[string]int{}
	for _, s := range def {
		types[s.Cache.TypeK]++
	}
	require.Len(t, types, len(quant.CacheTypes()), "the default suite has every cache type")
	full, _, err := Suite("full", DefaultParams())
	require.NoError(t, err)
	require.Len(t, full, general*len(quant.CacheTypes()), "no sliding class without a window, no hybrid class without cache groups")
}

// TestSuiteSkipsWhatDoesNotFit: a short context drops the long prompts, an unsupported
// cache type is skipped with the reason, and bad parameters are errors.
func TestSuiteSkipsWhatDoesNotFit(t *testing.T) {
	p := tinyParams
	p.Supports = func(t quant.CacheType) bool { return t != quant.Q8_0 }
	scs, skipped, err := Suite("full", p)
	require.NoError(t, err)
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Name] = s.Reason
	}
	require.Contains(t, reasons["long-prompt.f32"], "context")
	require.Contains(t, reasons["mixed-hits-misses.q8_0"], "q8_0")
	for _, s := range scs {
		require.NotEqual(t, "q8_0", s.Cache.TypeK)
		require.NotEqual(t, "long-prompt", s.Class)
	}

	_, _, err = Suite("nightly", DefaultParams())
	require.ErrorContains(t, err, `unknown suite "nightly"`)
	_, _, err = Suite("default", Params{BlockSize: 1, Blocks: 100, Context: 2048})
	require.ErrorContains(t, err, "block size ≥ 2")
}

// TestSeededPartsShareExactPrefixes: parts with the same seed share exactly their common
// length, other seeds give other tokens, BOS comes first, and no special token is drawn.
func TestSeededPartsShareExactPrefixes(t *testing.T) {
	m := tiny(t)
	noOutputs := func(string, int) ([]int, error) { return nil, nil }
	pr, err := newPromptResolver(m.Tokenizer, m.Config.Vocab, 99, noOutputs)
	require.NoError(t, err)
	a, err := pr.resolve(parts(seg(1, 48), seg(2, 5)))
	require.NoError(t, err)
	b, err := pr.resolve(parts(seg(1, 48), seg(3, 9)))
	require.NoError(t, err)
	c, err := pr.resolve(parts(seg(1, 50)))
	require.NoError(t, err)
	require.Len(t, a, 54)
	require.Equal(t, m.Tokenizer.BOS(), a[0])
	require.Equal(t, a[:49], b[:49], "48 shared tokens after BOS")
	require.NotEqual(t, a[49:], b[49:53])
	require.Equal(t, a[:49], c[:49], "a shorter part is a prefix of a longer one")
	typed := m.Tokenizer.(typedTokenizer)
	for _, id := range append(a[1:], b[1:]...) {
		require.NotEqual(t, m.Tokenizer.BOS(), id)
		require.NotEqual(t, m.Tokenizer.EOS(), id)
		require.NotEqual(t, tokenizer.TypeControl, typed.TokenType(id))
		require.NotEqual(t, tokenizer.TypeUnused, typed.TokenType(id))
	}
	other, err := newPromptResolver(m.Tokenizer, m.Config.Vocab, 100, noOutputs)
	require.NoError(t, err)
	d, err := other.resolve(parts(seg(1, 48)))
	require.NoError(t, err)
	require.NotEqual(t, a[1:49], d[1:49], "the scenario seed changes every part")

	noBOS, err := pr.resolve(Prompt{Parts: []Part{seg(1, 4)}, NoBOS: true})
	require.NoError(t, err)
	require.Equal(t, a[1:5], noBOS)
	ids, err := pr.resolve(Prompt{IDs: []int{1, 7, 9}})
	require.NoError(t, err)
	require.Equal(t, []int{1, 7, 9}, ids)
	text, err := pr.resolve(Prompt{Text: "hi"})
	require.NoError(t, err)
	require.Equal(t, m.Tokenizer.Encode("hi", true), text)
}

// TestScenarioValidation rejects malformed scenarios with messages that say what is wrong.
func TestScenarioValidation(t *testing.T) {
	base := func() *Scenario {
		return &Scenario{Format: ScenarioFormat, Name: "s", Cache: Cache{BlockSize: 4, Blocks: 8, TypeK: "f32", TypeV: "f32"},
			Events: []Event{submit(greedy("A", parts(seg(1, 3)), 4)), waitAll()}}
	}
	require.NoError(t, base().Validate())
	for _, tc := range []struct {
		name, want string
		edit       func(s *Scenario)
	}{
		{"format", "format", func(s *Scenario) { s.Format = "x" }},
		{"name", "scenario name", func(s *Scenario) { s.Name = "a/b" }},
		{"block size", "block_size ≥ 1", func(s *Scenario) { s.Cache.BlockSize = 0 }},
		{"cache type", "unknown cache type", func(s *Scenario) { s.Cache.TypeK = "f12" }},
		{"no events", "no events", func(s *Scenario) { s.Events = nil }},
		{"two actions", "exactly one of", func(s *Scenario) { s.Events[1].Flush = true }},
		{"cancel unknown", `cancels request "B"`, func(s *Scenario) { s.Events = append(s.Events, Event{Cancel: "B"}) }},
		{"wait unknown", `waits for request "B"`, func(s *Scenario) { s.Events[1].Wait.Request = "B" }},
		{"tokens without request", "needs wait.request", func(s *Scenario) { s.Events[1].Wait.Tokens = 3 }},
		{"duplicate id", "used twice", func(s *Scenario) { s.Events = append(s.Events, submit(greedy("A", parts(seg(1, 3)), 4))) }},
		{"max tokens", "max_tokens must be ≥ 1", func(s *Scenario) { s.Events[0].Submit[0].MaxTokens = 0 }},
		{"expect", "expect_cache", func(s *Scenario) { s.Events[0].Submit[0].ExpectCache = "maybe" }},
		{"two prompts", "exactly one of text, ids, parts", func(s *Scenario) { s.Events[0].Submit[0].Prompt.Text = "x" }},
		{"output of later", "not submitted in an earlier event", func(s *Scenario) {
			s.Events[0].Submit[0].Prompt = parts(outputOf("Z", 0, 2))
		}},
		{"stop after sampled", "stop_after needs a greedy", func(s *Scenario) {
			s.Events[0].Submit[0].StopAfter = 2
			s.Events[0].Submit[0].N = 2
		}},
	} {
		s := base()
		tc.edit(s)
		require.ErrorContains(t, s.Validate(), tc.want, tc.name)
	}
}

// TestParseScenarioFile reads a scenario written as JSON, and rejects unknown keys.
func TestParseScenarioFile(t *testing.T) {
	src := `{"format": "kvref-scenario/1", "name": "two-share-48", "seed": 7,
	  "cache": {"block_size": 16, "cache_blocks": 64, "cache_type_k": "f16", "cache_type_v": "f16"},
	  "events": [
	    {"submit": [{"id": "A", "prompt": {"parts": [{"seed": 1, "length": 48}, {"seed": 2, "length": 5}]}, "max_tokens": 8},
	                {"id": "B", "prompt": {"parts": [{"seed": 1, "length": 48}, {"seed": 3, "length": 9}]}, "max_tokens": 8}]},
	    {"wait": {"request": "A", "tokens": 2}},
	    {"cancel": "B"},
	    {"flush": true},
	    {"submit": [{"id": "C", "prompt": {"ids": [1, 5, 6]}, "max_tokens": 4, "n": 4,
	                 "sampling": {"temperature": 1, "top_p": 1, "seed": 3}, "expect_cache": "miss"}]}
	  ]}`
	s, err := ParseScenario([]byte(src))
	require.NoError(t, err)
	require.Len(t, s.Requests(), 3)
	require.Equal(t, 4, s.Requests()[2].Choices())
	require.False(t, s.Requests()[2].Greedy())
	require.Equal(t, "f16", s.Cache.TypeName())

	_, err = ParseScenario([]byte(strings.Replace(src, `"max_tokens": 4`, `"max_token": 4`, 1)))
	require.ErrorContains(t, err, `unknown field "max_token"`)

	// A built-in scenario survives a round trip through JSON.
	for _, sc := range tinySuite(t) {
		b, err := json.Marshal(sc)
		require.NoError(t, err)
		back, err := ParseScenario(b)
		require.NoError(t, err, sc.Name)
		require.Equal(t, sc, back)
	}
}

// TestAtCacheTypes: a class at one type pair is the full suite's scenario of that type, and
// a pair of different types gets its own name, seed and cache types.
func TestAtCacheTypes(t *testing.T) {
	full, _, err := Suite("full", DefaultParams())
	require.NoError(t, err)
	byName := map[string]*Scenario{}
	for _, s := range full {
		byName[s.Name] = s
	}
	base := byName["mixed-hits-misses.f32"]
	require.NotNil(t, base)
	same := AtCacheTypes(base, quant.Q4_0, quant.Q4_0)
	require.Equal(t, byName["mixed-hits-misses.q4_0"], same, "K = V: exactly the full suite's scenario")

	mixed := AtCacheTypes(base, quant.Q8_0, quant.F16)
	require.NoError(t, mixed.Validate())
	require.Equal(t, "mixed-hits-misses.q8_0+f16", mixed.Name)
	require.Equal(t, "q8_0/f16", mixed.Cache.TypeName())
	require.NotEqual(t, base.Seed, mixed.Seed, "its own prompts")
	require.Equal(t, "f32", base.Cache.TypeK, "the original is unchanged")
}
