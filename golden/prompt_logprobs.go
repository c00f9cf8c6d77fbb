package golden

import (
	"fmt"

	"github.com/kvref/kvref/quant"
)

// Prompt log-probabilities. A request with prompt_logprobs records, besides its generated
// steps, the log-probability of every prompt token after the first (GoldenRequest's
// prompt_steps). Engines have returned these from the wrong positions, or stale, when the
// prompt came from the prefix cache, so the scenarios of this class ask for them on a full
// and on a partial prefix hit, for the same overlapping prompts in two orders, and for a
// block-aligned prompt. A candidate's prompt log-probabilities are checked with the same
// tolerance rules as its generated ones (checkLogprobs): every prompt position is
// teacher-forced by construction, against the model's cache-free logits with -m MODEL, or
// else against the golden's top-k.

// comparePrompt checks a candidate's prompt log-probabilities. It reports unsupported
// (and records the refusal) when the candidate returned none: an engine that ignores echo
// or prompt_logprobs.
func (v *verifier) comparePrompt(gr *GoldenRequest, cr *CandidateRequest) (unsupported bool, err error) {
	if cr.PromptSteps == nil {
		cr.Unsupported = FeaturePromptLogprobs
		if cr.Error == "" {
			cr.Error = "the response has no prompt log-probabilities (echo with logprobs was ignored?)"
		}
		v.refused(gr, cr)
		return true, nil
	}
	n := len(gr.PromptIDs)
	if len(cr.PromptSteps) != n-1 {
		v.fail(gr.ID, -1, -1, KindPrompt, "request %s: the candidate returned log-probabilities for %d prompt tokens after the first, the prompt has %d", gr.ID, len(cr.PromptSteps), n-1)
		return false, nil
	}
	var full, full32 [][]float32
	if v.opt.Oracle != nil {
		kType, vType, err := v.g.Scenario.Cache.Types()
		if err != nil {
			return false, err
		}
		if full, err = v.opt.Oracle.Logits(gr.PromptIDs[:n-1], 0, kType, vType); err != nil {
			return false, fmt.Errorf("golden: prompt log-probabilities of scenario %s request %s: %w", v.g.Scenario.Name, gr.ID, err)
		}
		if kType != quant.F32 || vType != quant.F32 {
			if full32, err = v.opt.Oracle.Logits(gr.PromptIDs[:n-1], 0, quant.F32, quant.F32); err != nil {
				return false, fmt.Errorf("golden: prompt log-probabilities of scenario %s request %s: %w", v.g.Scenario.Name, gr.ID, err)
			}
		}
	}
	for i, s := range cr.PromptSteps {
		pos := i + 1
		where := fmt.Sprintf("request %s prompt token %d", gr.ID, pos)
		if s.ID != gr.PromptIDs[pos] || (s.Step >= 0 && s.Step != pos) {
			v.fail(gr.ID, -2, pos, KindPrompt, "%s: the candidate reports token %d at prompt position %d, the prompt has %d there (wrong positions)", where, s.ID, s.Step, gr.PromptIDs[pos])
			continue
		}
		var ref *reference
		var lp32 []float64
		if full != nil {
			lp := LogSoftmax(full[i])
			ref = &reference{full: lp, top: TopK(lp, max(v.g.TopK, len(s.Top), 1)+1)}
			if full32 != nil {
				lp32 = LogSoftmax(full32[i])
			}
		} else {
			ref = &reference{top: gr.PromptSteps[i].Top, given: &Logprob{s.ID, gr.PromptSteps[i].Logprob}}
		}
		v.rep.StepsCompared++
		v.checkLogprobs(gr, -2, pos, where, s, ref, lp32, false)
	}
	return false, nil
}

// echoed takes an echoed prompt off the front of a response's steps into the request's
// PromptSteps and returns the generated steps after it. An echo is recognised by its
// first step: the prompt's first token, with a null log-probability (nothing predicts it;
// a generated token always has one). A server that ignored echo returns only generated
// steps, and PromptSteps stays nil.
func (f *inflight) echoed(steps []CandidateStep) []CandidateStep {
	prompt := f.req.PromptIDs
	if len(steps) < len(prompt) || steps[0].ID != prompt[0] || steps[0].Logprob != nil {
		return steps
	}
	f.result.PromptSteps = make([]CandidateStep, 0, len(prompt)-1)
	for i, s := range steps[1:len(prompt)] {
		s.Step = i + 1
		f.result.PromptSteps = append(f.result.PromptSteps, s)
	}
	return steps[len(prompt):]
}

// score is a request for the prompt's log-probabilities that generates nothing.
func score(id string, p Prompt) Request {
	return Request{ID: id, Prompt: p, MaxTokens: 0, PromptLogprobs: true}
}

// promptClasses are the classes about prompt log-probabilities through the prefix cache
// (the prompt-logprobs suite; also in full). Their requests generate nothing unless said.
var promptClasses = []Class{
	{
		Name:    "prompt-logprobs-full-hit",
		Summary: "prompt log-probabilities of a prompt the prefix cache holds whole (no logits for cached positions; values from the wrong positions)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := parts(seg(1, 3*b))
			return newScenario(fmt.Sprintf("A (%d tokens) is generated from; then its prompt is scored (every full block a hit), and scored again while B generates after the same prefix.", 3*b+1),
				submit(greedy("A", x, 6)),
				waitAll(),
				submit(expect(score("S1", x), ExpectHit)),
				waitAll(),
				submit(expect(score("S2", x), ExpectHit), expect(greedy("B", parts(seg(1, 3*b), seg(2, 5)), 6), ExpectHit)),
			), nil
		},
	},
	{
		Name:    "prompt-logprobs-partial-hit",
		Summary: "prompt log-probabilities when part of the prompt is cached and the rest computed (the seam between cached and computed positions)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			return newScenario("A caches 2 blocks and a half; S scores a prompt sharing them and going on 2 blocks further; T scores one that diverges inside the first block, then generates.",
				submit(greedy("A", parts(seg(1, 2*b+b/2)), 4)),
				waitAll(),
				submit(expect(score("S", parts(seg(1, 2*b+b/2), seg(2, 2*b))), ExpectHit)),
				waitAll(),
				submit(expect(Request{ID: "T", Prompt: parts(seg(1, b/2), seg(3, b+3)), MaxTokens: 5, IgnoreEOS: true, PromptLogprobs: true}, ExpectMiss)),
			), nil
		},
	},
	{
		Name:    "prompt-logprobs-two-orders",
		Summary: "the same overlapping prompts scored in two orders (values that depend on which request filled the blocks, or stale output buffers)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x, y := parts(seg(1, 2*b), seg(2, b+3)), parts(seg(1, 2*b), seg(3, 2*b+1))
			return newScenario("X then Y, which share 2 blocks; the cache is flushed; Y then X again. Each request's values are the same in both orders.",
				submit(expect(score("X1", x), ExpectMiss)),
				waitAll(),
				submit(expect(score("Y1", y), ExpectHit)),
				waitAll(),
				Event{Flush: true},
				submit(expect(score("Y2", y), ExpectMiss)),
				waitAll(),
				submit(expect(score("X2", x), ExpectHit)),
			), nil
		},
	},
	{
		Name:    "prompt-logprobs-block-aligned",
		Summary: "prompt log-probabilities of a prompt that ends exactly at a block boundary, scored twice (the last block full, never a hit: the last token is recomputed)",
		build: func(p Params) (*Scenario, error) {
			b := p.BlockSize
			x := parts(seg(1, 4*b-1)) // 4 blocks with BOS
			return newScenario(fmt.Sprintf("A prompt of exactly %d tokens (4 blocks) is scored, then scored again: 3 blocks hit, the 4th is recomputed; then a prompt one token longer.", 4*b),
				submit(expect(score("S1", x), ExpectMiss)),
				waitAll(),
				submit(expect(score("S2", x), ExpectHit)),
				waitAll(),
				submit(expect(score("S3", parts(seg(1, 4*b))), ExpectHit)),
			), nil
		},
	},
}
