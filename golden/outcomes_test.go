package golden

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRefusedFeatureRecognition: a refusal is attributed to a feature only when the request
// uses it and the message says so; other errors stay errors.
func TestRefusedFeatureRecognition(t *testing.T) {
	fork := completionRequest{Prompt: []int{1, 2}, N: 4, Logprobs: 5, Temperature: 1, Seed: new(uint64)}
	k := 3
	topK := completionRequest{Prompt: []int{1, 2}, Logprobs: 5, TopK: &k}
	plain := completionRequest{Prompt: []int{1, 2}, Logprobs: 5}
	for _, tc := range []struct {
		body    completionRequest
		message string
		want    string
	}{
		{fork, "Only one completion choice is allowed", FeatureN}, // llama-server c392e50
		{fork, "n must be 1", FeatureN},
		{fork, "`n` > 1 is not supported by this server", FeatureN},
		{plain, "Only one completion choice is allowed", ""}, // the request did not ask for n > 1
		{topK, "Unsupported parameter: top_k", "top_k"},
		{topK, "top_k is not supported", "top_k"},
		{plain, "Requested sample logprobs of 5, which is greater than max of 0", FeatureLogprobs}, // vLLM --max-logprobs
		{plain, "prompt must be a string", FeatureTokenIDs},
		{plain, "token ids are not supported as a prompt", FeatureTokenIDs},
		{plain, "the request exceeds the available context size, try increasing it", ""}, // a limit, not a feature
		{plain, "Internal server error", ""},
		{fork, "seed: extra inputs are not permitted", "seed"}, // FastAPI/pydantic
	} {
		require.Equal(t, tc.want, refusedFeature(tc.body, tc.message), tc.message)
	}

	for body, want := range map[string]string{
		`{"error":{"code":500,"message":"Only one completion choice is allowed","type":"server_error"}}`: "Only one completion choice is allowed",
		`{"error":"top_k is not supported"}`:                                          "top_k is not supported",
		`{"message":"n must be 1"}`:                                                   "n must be 1",
		`{"detail":[{"loc":["body","seed"],"msg":"extra inputs are not permitted"}]}`: `[{"loc":["body","seed"],"msg":"extra inputs are not permitted"}]`,
		"  Bad Gateway\n":                                                             "Bad Gateway",
	} {
		require.Equal(t, want, errorMessage([]byte(body)), body)
	}

	r, err := ParseRequirements("n, top_k,cache-report")
	require.NoError(t, err)
	require.True(t, r.has(FeatureN) && r.has("top_k") && r.has(FeatureCacheReport))
	require.False(t, r.has(FeatureTokenIDs))
	all, err := ParseRequirements("all")
	require.NoError(t, err)
	require.True(t, all.has(FeatureTokenIDs) && all.has("min_p"))
	_, err = ParseRequirements("n,forks")
	require.ErrorContains(t, err, `unknown feature "forks"`)
}

// refuse marks request id of the candidate's scenario as refused for feature f.
func refuse(c *Candidate, scenario, id, f, reason string) {
	r := c.Scenarios[scenario].Requests[id]
	r.Choices, r.FinishReasons, r.CachedTokens, r.CacheEvidence = nil, nil, nil, ""
	r.Unsupported, r.Error = f, reason
}

// TestUnsupportedOutcome: a refusal before any token makes the scenario unsupported
// (counted apart, a JUnit skip, and the run still passes); --require makes it a failure, as
// does a refusal after tokens; a candidate that supports nothing does not pass.
func TestUnsupportedOutcome(t *testing.T) {
	fork, mixed := tinyGolden(t, "fork-partial-block.f32"), tinyGolden(t, "mixed-hits-misses.f32")
	goldens := []*Golden{fork, mixed}
	self := selfCandidate(t, goldens...)
	const msg = `POST /v1/completions: 500: {"error":{"code":500,"message":"Only one completion choice is allowed"}}`

	c := cloneCandidate(t, self)
	refuse(c, fork.Scenario.Name, "A", FeatureN, msg)
	c = cloneCandidate(t, c) // the refusal survives the dump format
	require.Equal(t, FeatureN, c.Scenarios[fork.Scenario.Name].Requests["A"].Unsupported)
	rep, err := Verify(goldens, c, VerifyOptions{Oracle: oracle(t)})
	require.NoError(t, err)
	require.True(t, rep.Passed, "unsupported scenarios are counted apart")
	s := rep.Scenarios[0]
	require.Equal(t, StatusUnsupported, s.Status, "%+v", s.Failures)
	require.Len(t, s.Unsupported, 1)
	require.Equal(t, "A", s.Unsupported[0].Request)
	require.Contains(t, s.Unsupported[0].Message, "request A needs n > 1 (several continuations of one prompt), which the candidate refused: "+msg)
	require.Equal(t, StatusPass, rep.Scenarios[1].Status)

	var buf bytes.Buffer
	require.NoError(t, rep.WriteTable(&buf))
	require.Contains(t, buf.String(), "UNSUPPORTED [n] request A needs n > 1")
	require.Contains(t, buf.String(), "PASS: 2 scenarios, 1 passed, 1 unsupported, 0 failed, 0 vacuous, 0 missing")
	buf.Reset()
	require.NoError(t, rep.WriteJUnit(&buf))
	var doc struct {
		Skipped int `xml:"skipped,attr"`
		Suites  []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(&buf)
	dec.Strict = true
	require.NoError(t, dec.Decode(&doc))
	require.Equal(t, 1, doc.Skipped)
	cases := doc.Suites[0].Cases
	require.Equal(t, fork.Scenario.Name, cases[0].Name)
	require.NotNil(t, cases[0].Skipped)
	require.Nil(t, cases[0].Failure)
	require.Contains(t, cases[0].Skipped.Message, "Only one completion choice is allowed")
	require.Nil(t, cases[1].Skipped)

	for _, req := range []Requirements{{FeatureN}, {FeatureAll}} {
		rep, err = Verify(goldens, c, VerifyOptions{Require: req})
		require.NoError(t, err)
		require.False(t, rep.Passed)
		require.Equal(t, StatusFail, rep.Scenarios[0].Status)
		require.Equal(t, KindUnsupported, rep.Scenarios[0].Failures[0].Kind)
		require.Contains(t, rep.Scenarios[0].Failures[0].Message, "and VerifyOptions.Require demands it")
	}
	rep, err = Verify(goldens, c, VerifyOptions{Require: Requirements{"top_k"}})
	require.NoError(t, err)
	require.True(t, rep.Passed, "another feature required")

	// A "refusal" after tokens is a failure: the engine broke off a request it had started.
	late := cloneCandidate(t, self)
	late.Scenarios[fork.Scenario.Name].Requests["A"].Unsupported = FeatureN
	rep, err = Verify(goldens, late, VerifyOptions{})
	require.NoError(t, err)
	require.Equal(t, StatusFail, rep.Scenarios[0].Status)
	require.Contains(t, rep.Scenarios[0].Failures[0].Message, "after producing")

	// Failures win over refusals.
	both := cloneCandidate(t, c)
	both.Scenarios[fork.Scenario.Name].Requests["C"].Choices[0][2].Top[0].Logprob -= 1
	rep, err = Verify(goldens, both, VerifyOptions{Oracle: oracle(t)})
	require.NoError(t, err)
	require.Equal(t, StatusFail, rep.Scenarios[0].Status)

	// Nothing supported: nothing verified, no pass.
	none := cloneCandidate(t, self)
	for _, g := range goldens {
		for id := range none.Scenarios[g.Scenario.Name].Requests {
			refuse(none, g.Scenario.Name, id, FeatureTokenIDs, "prompt must be a string")
		}
	}
	rep, err = Verify(goldens, none, VerifyOptions{})
	require.NoError(t, err)
	require.False(t, rep.Passed)
	require.Equal(t, 2, rep.Counts()[StatusUnsupported])
}

// TestStopStringFinishRule: at a stop-string finish the candidate may return the token
// that completes the stop string (kvref, vLLM) or leave it out (llama-server); a token
// missing anywhere else is still a dropped token.
func TestStopStringFinishRule(t *testing.T) {
	g := tinyGolden(t, "stop-mid-block.f32")
	a := g.Request("A")
	require.NotEmpty(t, a.Stop)
	require.Equal(t, "stop", a.Choices[0].FinishReason)
	self := selfCandidate(t, g)
	name := g.Scenario.Name
	drop := func(c *Candidate, id string, n int, finish string) {
		r := c.Scenarios[name].Requests[id]
		r.Choices[0] = r.Choices[0][:len(r.Choices[0])-n]
		r.FinishReasons = []string{finish}
	}
	for _, opt := range []VerifyOptions{{}, {Oracle: oracle(t)}} {
		with := cloneCandidate(t, self)
		with.Scenarios[name].Requests["A"].FinishReasons = []string{"stop"}
		rep := verifyOne(t, g, with, opt)
		require.Equal(t, StatusPass, rep.Status, "with the completing token: %+v", rep.Failures)
		require.NotContains(t, strings.Join(rep.Notes, "\n"), "leaves out")

		without := cloneCandidate(t, self)
		drop(without, "A", 1, "stop")
		drop(without, "C", 1, "") // no finish reason reported
		rep = verifyOne(t, g, without, opt)
		require.Equal(t, StatusPass, rep.Status, "without the completing token: %+v", rep.Failures)
		require.Contains(t, strings.Join(rep.Notes, "\n"), "request A continuation 0: the candidate leaves out the token that completes the stop string")

		for _, tc := range []struct {
			name   string
			n      int
			finish string
		}{
			{"two tokens missing", 2, "stop"},
			{"the candidate says it ran out of tokens", 1, "length"},
		} {
			bad := cloneCandidate(t, self)
			drop(bad, "A", tc.n, tc.finish)
			rep = verifyOne(t, g, bad, opt)
			require.Equal(t, StatusFail, rep.Status, tc.name)
			require.Equal(t, KindDropped, rep.Failures[0].Kind, tc.name)
			require.Contains(t, rep.Failures[0].Message, "dropped at the end", tc.name)
		}
	}

	// Not at a stop finish: a length-finished continuation one token short fails.
	m := tinyGolden(t, "mixed-hits-misses.f32")
	c := selfCandidate(t, m)
	r := c.Scenarios[m.Scenario.Name].Requests["B"]
	r.Choices[0] = r.Choices[0][:len(r.Choices[0])-1]
	r.FinishReasons = []string{"stop"}
	rep := verifyOne(t, m, c, VerifyOptions{})
	require.Equal(t, StatusFail, rep.Status)
	require.Equal(t, KindDropped, rep.Failures[0].Kind)
}

// TestCacheHitEvidence: the BOS every prompt starts with is not a hit (llama-server reuses
// it from an unrelated prompt); impossible counts fail; the report says where the counts
// came from and --require cache-report fails a candidate that gives none.
func TestCacheHitEvidence(t *testing.T) {
	g := tinyGolden(t, "mixed-hits-misses.f32")
	self := selfCandidate(t, g)
	name := g.Scenario.Name
	set := func(c *Candidate, id string, n int, evidence string) {
		c.Scenarios[name].Requests[id].CachedTokens = &n
		c.Scenarios[name].Requests[id].CacheEvidence = evidence
	}

	rep := verifyOne(t, g, self, VerifyOptions{})
	require.Equal(t, EvidenceKvref, rep.HitEvidence)

	c := cloneCandidate(t, self)
	for _, id := range []string{"A", "B", "C", "D", "E"} {
		set(c, id, 1, EvidencePromptN)
	}
	set(c, "B", 8, EvidencePromptN)
	set(c, "D", 8, EvidencePromptN)
	rep = verifyOne(t, g, c, VerifyOptions{})
	require.Equal(t, StatusPass, rep.Status, "a miss that reuses only BOS is a miss: %v %+v", rep.Vacuous, rep.Failures)
	require.Equal(t, EvidencePromptN, rep.HitEvidence)
	require.Equal(t, 2, rep.ObservedHits)

	set(c, "D", 1, EvidencePromptN)
	rep = verifyOne(t, g, c, VerifyOptions{})
	require.Equal(t, StatusVacuous, rep.Status, "a hit of only BOS is no hit")
	require.Contains(t, rep.Vacuous[0], "request D expects a prefix-cache hit but the candidate reports 1 cached tokens (prompt_n; kvref reused")

	set(c, "D", 8, EvidenceCachedTokens)
	rep = verifyOne(t, g, c, VerifyOptions{})
	require.Equal(t, "cached_tokens+prompt_n", rep.HitEvidence)

	bad := cloneCandidate(t, self)
	set(bad, "C", len(g.Request("C").PromptIDs)+1, EvidencePromptN)
	rep = verifyOne(t, g, bad, VerifyOptions{})
	require.Equal(t, StatusFail, rep.Status)
	require.Equal(t, KindCache, rep.Failures[0].Kind)
	require.Contains(t, rep.Failures[0].Message, "not a possible count")

	silent := cloneCandidate(t, self)
	for _, r := range silent.Scenarios[name].Requests {
		r.CachedTokens = nil
	}
	rep = verifyOne(t, g, silent, VerifyOptions{})
	require.Equal(t, StatusPass, rep.Status)
	require.Equal(t, EvidenceNone, rep.HitEvidence)
	rep = verifyOne(t, g, silent, VerifyOptions{Require: Requirements{FeatureCacheReport}})
	require.Equal(t, StatusFail, rep.Status)
	require.Equal(t, KindUnsupported, rep.Failures[0].Kind)
}

// TestSlotCacheModel: with --cache-model slots, an expected hit that missed while a request
// of the same wave sharing its prefix hit is served to that sibling (noted); without a
// sibling hit it is still vacuous; the paged model never excuses it.
func TestSlotCacheModel(t *testing.T) {
	g := tinyGolden(t, "mixed-hits-misses.f32") // B and D share A's prefix in one wave
	c := cloneCandidate(t, selfCandidate(t, g))
	zero := 0
	c.Scenarios[g.Scenario.Name].Requests["D"].CachedTokens = &zero

	rep := verifyOne(t, g, c, VerifyOptions{})
	require.Equal(t, StatusVacuous, rep.Status)
	rep = verifyOne(t, g, c, VerifyOptions{CacheModel: CacheModelSlots})
	require.Equal(t, StatusPass, rep.Status, "%v", rep.Vacuous)
	require.Equal(t, 1, rep.ObservedHits)
	require.Equal(t, 1, rep.SlotBoundHits)
	require.Contains(t, strings.Join(rep.Notes, "\n"), "request D expected a prefix-cache hit and got 0 cached tokens (kvref), but request B of the same wave, which shares its prefix, hit")
	var buf bytes.Buffer
	require.NoError(t, (&Report{Scenarios: []*ScenarioReport{rep}}).WriteTable(&buf))
	require.Contains(t, buf.String(), "1/2 (+1 slot)")

	c.Scenarios[g.Scenario.Name].Requests["B"].CachedTokens = &zero
	rep = verifyOne(t, g, c, VerifyOptions{CacheModel: CacheModelSlots})
	require.Equal(t, StatusVacuous, rep.Status, "no sibling was served either")
	require.Len(t, rep.Vacuous, 2)

	_, err := ParseCacheModel("blocks")
	require.ErrorContains(t, err, `unknown cache model "blocks"`)
}
