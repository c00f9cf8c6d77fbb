package golden

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/kvref/kvref/quant"
)

// Selection says which scenarios to record: scenario files, or a built-in suite at its own
// choice of cache types, at each of Types (keys and values alike), or at one key/value pair.
type Selection struct {
	Files []string          // scenario files; when given, the rest is not used
	Suite string            // a name of Suites
	Types []quant.CacheType // record the suite's classes at these types instead of its own
	Pair  *[2]quant.CacheType
}

// Select returns the scenarios of a selection for the parameters, and those a suite skips
// (with why).
func Select(sel Selection, p Params) ([]*Scenario, []Skipped, error) {
	switch {
	case len(sel.Files) > 0:
		var out []*Scenario
		for _, path := range sel.Files {
			s, err := LoadScenario(path)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, s)
		}
		return out, nil, nil
	case sel.Pair != nil:
		return SuiteAtPair(sel.Suite, p, sel.Pair[0], sel.Pair[1])
	case sel.Types != nil:
		return SuiteAt(sel.Suite, p, sel.Types)
	}
	return Suite(sel.Suite, p)
}

// SuiteAtPair returns the suite's classes with keys stored as k and values as v (for a
// candidate such as llama-server -ctk q8_0 -ctv f16).
func SuiteAtPair(suite string, p Params, k, v quant.CacheType) ([]*Scenario, []Skipped, error) {
	for _, t := range []quant.CacheType{k, v} {
		if p.Supports != nil && !p.Supports(t) {
			return nil, nil, fmt.Errorf("the model's K/V rows cannot be stored as %s (the block types need kv_heads·head_dim to be a multiple of 32)", t)
		}
	}
	f32, skipped, err := SuiteAt(suite, p, []quant.CacheType{quant.F32})
	if err != nil {
		return nil, nil, err
	}
	var out []*Scenario
	for _, s := range f32 {
		out = append(out, AtCacheTypes(s, k, v))
	}
	return out, skipped, nil
}

// Filter keeps the goldens whose scenario name matches name (nil: every name) and, when
// types is not nil, whose reference keys and values are stored as types[0] and types[1].
func Filter(goldens []*Golden, name *regexp.Regexp, types *[2]quant.CacheType) []*Golden {
	return slices.DeleteFunc(slices.Clone(goldens), func(g *Golden) bool {
		if name != nil && !name.MatchString(g.Scenario.Name) {
			return true
		}
		if types == nil {
			return false
		}
		k, v, err := g.Scenario.Cache.Types()
		return err != nil || k != types[0] || v != types[1]
	})
}

// OutputTokens is the number of tokens the golden's requests generated, over every choice.
func (g *Golden) OutputTokens() int {
	n := 0
	for _, r := range g.Requests {
		for _, c := range r.Choices {
			n += len(c.OutputIDs)
		}
	}
	return n
}

// Summary is one line on what recording the golden did: its scenario, requests, tokens,
// steps, prefix hits, evictions, preemptions and, when any, the blocks a window reclaimed.
func (g *Golden) Summary() string {
	reclaimed := ""
	if g.Stats.BlocksReclaimed > 0 {
		reclaimed = fmt.Sprintf(", %d blocks reclaimed", g.Stats.BlocksReclaimed)
	}
	return fmt.Sprintf("%-34s %2d requests %5d tokens %4d steps, %5d prefix-hit tokens, %3d evictions, %d preemptions%s",
		g.Scenario.Name, len(g.Requests), g.OutputTokens(), g.Stats.Steps, g.Stats.PrefixHitTokens, g.Stats.Evictions, g.Stats.Preemptions, reclaimed)
}
