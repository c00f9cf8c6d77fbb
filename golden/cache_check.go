package golden

import (
	"fmt"
	"slices"
	"strings"
)

// CacheModel is how a candidate's prefix cache works, which decides which expected hits it
// can serve.
type CacheModel string

// The cache models.
const (
	// CacheModelPaged is a shared pool of blocks indexed by prefix (vLLM, SGLang, kvref):
	// any number of requests can reuse a cached prefix at once, so every expected hit must
	// be observed.
	CacheModelPaged CacheModel = "paged"
	// CacheModelSlots is a cache per slot (llama.cpp's llama-server): a slot holds the
	// last sequence it ran and a request reuses the common prefix of the slot it is given,
	// so a cached sequence serves one request at a time. An expected hit that missed while
	// another request of the same wave that shares its prefix hit is counted as served to
	// that sibling (noted, not vacuous).
	CacheModelSlots CacheModel = "slots"
)

// ParseCacheModel reads a cache model name.
func ParseCacheModel(s string) (CacheModel, error) {
	switch m := CacheModel(s); m {
	case CacheModelPaged, CacheModelSlots:
		return m, nil
	case "":
		return CacheModelPaged, nil
	}
	return "", fmt.Errorf("golden: unknown cache model %q; the models are %s and %s", s, CacheModelPaged, CacheModelSlots)
}

// missedHit is a request that expected a prefix-cache hit and did not get one.
type missedHit struct {
	gr       *GoldenRequest
	cached   int
	evidence string
}

// settleMissedHits makes every missed hit vacuous, except, with CacheModelSlots, those
// whose prefix a sibling of the same wave was served.
func (v *verifier) settleMissedHits() {
	for _, m := range v.missedHits {
		if v.opt.CacheModel == CacheModelSlots {
			if s := v.servedSibling(m.gr); s != "" {
				v.rep.SlotBoundHits++
				v.rep.Notes = append(v.rep.Notes, fmt.Sprintf("request %s expected a prefix-cache hit and got %d cached tokens (%s), but request %s of the same wave, which shares its prefix, hit: a slot cache serves a cached sequence to one request at a time",
					m.gr.ID, m.cached, m.evidence, s))
				continue
			}
		}
		v.rep.Vacuous = append(v.rep.Vacuous, fmt.Sprintf("request %s expects a prefix-cache hit but the candidate reports %d cached tokens (%s; kvref reused %d): the cached path was not exercised",
			m.gr.ID, m.cached, m.evidence, m.gr.CachedTokens))
	}
}

// servedSibling returns a request of gr's wave that hit and shares more than commonLead
// leading tokens with gr, so that both would reuse the same cached sequence, or "".
func (v *verifier) servedSibling(gr *GoldenRequest) string {
	need := v.commonLead(gr) + 1
	for i := range v.g.Requests {
		s := &v.g.Requests[i]
		if s.ID != gr.ID && s.Event == gr.Event && v.hits[s.ID] && commonPrefix(s.PromptIDs, gr.PromptIDs) >= need {
			return s.ID
		}
	}
	return ""
}

// commonLead is how many leading prompt tokens a request shares with every other prompt:
// its BOS, when it starts with one. An engine that reuses any common prefix of what it
// holds (llama-server's slots) reuses that BOS from an unrelated prompt; a report of that
// many cached tokens is not a hit.
func (v *verifier) commonLead(gr *GoldenRequest) int {
	if len(gr.PromptIDs) > 0 && gr.PromptIDs[0] == v.g.Model.BOS {
		return 1
	}
	return 0
}

// checkCache compares the candidate's reported cached prompt tokens with the request's
// expectation. A hit is more cached tokens than commonLead. An expected hit that kvref
// made wholly on blocks a sliding window had released (GoldenRequest.ReclaimedTokens: the
// first reused block was held by nobody and last released by a Reclaim) is optional: a
// candidate may recompute those blocks, so missing it is noted, not vacuous.
func (v *verifier) checkCache(gr *GoldenRequest, cr *CandidateRequest, control bool) {
	lead := v.commonLead(gr)
	optional := gr.ExpectCache == ExpectHit && gr.ReclaimedTokens > 0 && gr.CachedTokens-gr.ReclaimedTokens <= lead
	switch {
	case optional:
		v.rep.ReclaimedHits++
	case gr.ExpectCache == ExpectHit:
		v.rep.ExpectedHits++
	}
	if cr.CachedTokens == nil {
		return
	}
	v.rep.HitsReported = true
	n := *cr.CachedTokens
	if n < 0 || n > len(gr.PromptIDs) {
		v.fail(gr.ID, -1, -1, KindCache, "request %s: the candidate reports %d cached prompt tokens (%s) for a prompt of %d tokens: not a possible count",
			gr.ID, n, cr.evidence(), len(gr.PromptIDs))
		return
	}
	hit := n > lead
	v.hits[gr.ID] = hit
	switch {
	case gr.ExpectCache == ExpectHit && hit && optional:
		v.rep.ObservedReclaimedHits++
	case gr.ExpectCache == ExpectHit && hit:
		v.rep.ObservedHits++
	}
	switch {
	case control && hit:
		v.fail(gr.ID, -1, -1, KindControl, "request %s: this is a control run (prefix caching disabled), yet the candidate reports %d cached prompt tokens: its cache was not disabled", gr.ID, n)
	case control:
	case optional && !hit:
		v.rep.Notes = append(v.rep.Notes, fmt.Sprintf("request %s: kvref reused %d prompt tokens, all from blocks a sliding window had released (kept cached until evicted); the candidate recomputed them (%d cached tokens, %s), which is as correct: a hit on reclaimed blocks is optional",
			gr.ID, gr.CachedTokens, n, cr.evidence()))
	case gr.ExpectCache == ExpectHit && !hit:
		v.missedHits = append(v.missedHits, missedHit{gr, n, cr.evidence()})
	case gr.ExpectCache == ExpectHit && gr.ReclaimedTokens > 0 && n < gr.CachedTokens:
		v.rep.Notes = append(v.rep.Notes, fmt.Sprintf("request %s: the candidate reused %d prompt tokens (%s), kvref %d, of which the %d from its first reclaimed block on (released by a sliding window, kept cached until evicted) may be recomputed",
			gr.ID, n, cr.evidence(), gr.CachedTokens, gr.ReclaimedTokens))
	case gr.ExpectCache == ExpectMiss && hit:
		why := fmt.Sprintf("its pool is larger than the scenario's %d blocks of %d, or it evicts differently", v.g.Scenario.Cache.Blocks, v.g.Scenario.Cache.BlockSize)
		if v.opt.CacheModel == CacheModelSlots {
			why = "it has more slots than the scenario's requests overwrite, so the slot holding the prefix survived"
		}
		v.rep.Vacuous = append(v.rep.Vacuous, fmt.Sprintf("request %s expects a miss (its prefix evicted) but the candidate reports %d cached tokens (%s): %s, so eviction was not exercised",
			gr.ID, n, cr.evidence(), why))
	}
}

// evidence names where the scenario's cached-token counts came from: one evidence, or
// several joined by "+" when requests differ, or EvidenceNone.
func (v *verifier) evidence(cs *CandidateScenario) string {
	var list []string
	for _, id := range sortedKeys(cs.Requests) {
		if r := cs.Requests[id]; r.CachedTokens != nil && !slices.Contains(list, r.evidence()) {
			list = append(list, r.evidence())
		}
	}
	if len(list) == 0 {
		return EvidenceNone
	}
	slices.Sort(list)
	return strings.Join(list, "+")
}
