package golden

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/quant"
	"github.com/kvref/kvref/server"
)

// promptGoldens records the prompt-logprobs suite on the tiny model (checked against the
// cache-free reference while recording).
func promptGoldens(t *testing.T) []*Golden {
	t.Helper()
	m := tiny(t)
	p := tinyParams
	p.Supports = func(c quant.CacheType) bool { return c.Validate(m.Config.KVHeads, m.Config.HeadDim) == nil }
	scs, _, err := Suite("prompt-logprobs", p)
	require.NoError(t, err)
	require.Len(t, scs, 8, "4 classes at f32 and f16")
	var out []*Golden
	for _, sc := range scs {
		g := recordOnce(t, m, scs, sc.Name)
		for _, r := range g.Requests {
			if r.ID[0] == 'S' || r.ID[0] == 'X' || r.ID[0] == 'Y' {
				require.Len(t, r.PromptSteps, len(r.PromptIDs)-1, "%s %s", sc.Name, r.ID)
			}
		}
		out = append(out, g)
	}
	return out
}

// TestPromptLogprobScenarios: the prompt-logprobs goldens pass against kvref serve (echo +
// logprobs + max_tokens 0 over HTTP) and against kvref's replay; a candidate whose prompt
// log-probabilities are off fails with the position named, one from the wrong positions
// fails, and one that returns none is unsupported (a failure with --require
// prompt-logprobs).
func TestPromptLogprobScenarios(t *testing.T) {
	goldens := promptGoldens(t)
	eng, err := engine.New(tiny(t), engine.Config{BlockSize: tinyParams.BlockSize, CacheBlocks: tinyParams.Blocks, Threads: 1})
	require.NoError(t, err)
	defer eng.Close()
	srv := server.New(eng, server.Options{})
	go srv.Run(context.Background())
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	target := &Target{BaseURL: ts.URL + "/v1", FlushURL: ts.URL + "/reset_prefix_cache"}
	cand, err := target.Run(context.Background(), goldens)
	require.NoError(t, err)
	for _, opt := range []VerifyOptions{{}, {Oracle: oracle(t)}} {
		rep, err := Verify(goldens, cand, opt)
		require.NoError(t, err)
		for _, s := range rep.Scenarios {
			require.Equal(t, StatusPass, s.Status, "%s: %+v %+v", s.Name, s.Failures, s.Unsupported)
			if s.CacheType == "f32" { // the server's cache: bit for bit
				require.Zero(t, s.WorstError, s.Name)
			}
		}
	}

	self := selfCandidate(t, goldens...)
	var dump bytes.Buffer // the dump carries prompt lines
	require.NoError(t, WriteDump(&dump, self))
	require.Contains(t, dump.String(), `"prompt":true`)
	back, err := ReadDump(&dump)
	require.NoError(t, err)
	rep, err := Verify(goldens, back, VerifyOptions{Oracle: oracle(t)})
	require.NoError(t, err)
	require.True(t, rep.Passed)

	// Off by 0.2 at one position; shifted by one position; none at all.
	g := goldens[0]
	name := g.Scenario.Name
	off := selfCandidate(t, g)
	req := off.Scenarios[name].Requests["S1"]
	*req.PromptSteps[5].Logprob += 0.2
	rep, err = Verify([]*Golden{g}, off, VerifyOptions{Oracle: oracle(t)})
	require.NoError(t, err)
	require.Equal(t, StatusFail, rep.Scenarios[0].Status)
	require.Contains(t, rep.Scenarios[0].Failures[0].Message, "request S1 prompt token 6")

	shifted := selfCandidate(t, g)
	req = shifted.Scenarios[name].Requests["S1"]
	for i := range req.PromptSteps[:len(req.PromptSteps)-1] {
		req.PromptSteps[i].Logprob = req.PromptSteps[i+1].Logprob
		req.PromptSteps[i].Top = req.PromptSteps[i+1].Top
	}
	rep, err = Verify([]*Golden{g}, shifted, VerifyOptions{})
	require.NoError(t, err)
	require.Equal(t, StatusFail, rep.Scenarios[0].Status)
	require.Equal(t, KindLogprob, rep.Scenarios[0].Failures[0].Kind)

	none := selfCandidate(t, g)
	for _, r := range none.Scenarios[name].Requests {
		r.PromptSteps = nil
	}
	rep, err = Verify([]*Golden{g}, none, VerifyOptions{})
	require.NoError(t, err)
	require.Equal(t, StatusUnsupported, rep.Scenarios[0].Status)
	require.Equal(t, FeaturePromptLogprobs, rep.Scenarios[0].Unsupported[0].Feature)
	rep, err = Verify([]*Golden{g}, none, VerifyOptions{Require: Requirements{FeaturePromptLogprobs}})
	require.NoError(t, err)
	require.Equal(t, StatusFail, rep.Scenarios[0].Status)
}
