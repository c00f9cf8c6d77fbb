package golden

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The features a scenario may need from a candidate beyond a plain greedy completion, as
// --require names them. A request's other parameters are named by their JSON keys (top_k,
// min_p, seed, ignore_eos, stop, stream, cache_salt, ...).
const (
	FeatureN           = "n"            // several continuations of one prompt (n > 1: the forks)
	FeatureTokenIDs    = "token-ids"    // a prompt given as token ids
	FeatureLogprobs    = "logprobs"     // top-k log-probabilities per token
	FeatureCacheReport = "cache-report" // reporting cached prompt tokens (any evidence but EvidenceNone)
	// FeaturePromptLogprobs is the log-probabilities of a prompt's tokens (echo with
	// logprobs, max_tokens 0).
	FeaturePromptLogprobs = "prompt-logprobs"
	// FeatureAll, given to --require, requires every feature.
	FeatureAll = "all"
)

// describeFeature says what a feature is, for reports.
func describeFeature(f string) string {
	switch f {
	case FeatureN:
		return "n > 1 (several continuations of one prompt)"
	case FeatureTokenIDs:
		return "a prompt of token ids"
	case FeatureLogprobs:
		return "per-token log-probabilities"
	case FeatureCacheReport:
		return "a report of cached prompt tokens"
	case FeaturePromptLogprobs:
		return "the prompt's log-probabilities (echo with logprobs and max_tokens 0)"
	}
	return "the parameter " + f
}

// Requirements are the features a candidate must support: a request it refused that needs
// one of them fails instead of being unsupported.
type Requirements []string

// has reports whether feature f is required.
func (r Requirements) has(f string) bool {
	return slices.Contains(r, f) || slices.Contains(r, FeatureAll)
}

// ParseRequirements reads a comma-separated list of features ("all": every one).
func ParseRequirements(list string) (Requirements, error) {
	var out Requirements
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			continue
		case f == FeatureAll, f == FeatureN, f == FeatureTokenIDs, f == FeatureLogprobs, f == FeatureCacheReport, f == FeaturePromptLogprobs, slices.Contains(requestParameters, f):
			out = append(out, f)
		default:
			return nil, fmt.Errorf("golden: unknown feature %q; the features are %s, %s, %s, %s, %s, the request parameters %s, and %s",
				f, FeatureN, FeatureTokenIDs, FeatureLogprobs, FeatureCacheReport, FeaturePromptLogprobs, strings.Join(requestParameters, ", "), FeatureAll)
		}
	}
	return out, nil
}

// requestParameters are the keys of a completion request, beyond the prompt, that a server
// may refuse.
var requestParameters = []string{"temperature", "top_k", "top_p", "min_p", "seed", "ignore_eos", "stop", "stream", "stream_options", "return_tokens_as_token_ids", "cache_salt", "cache_prompt", "user"}

// used returns the features a request body needs, most specific first: n, then the
// parameters it sets, then log-probabilities and token ids (which every request uses).
func (b completionRequest) used() []string {
	var out []string
	if b.N > 1 {
		out = append(out, FeatureN)
	}
	if b.Echo {
		out = append(out, FeaturePromptLogprobs)
	}
	set := map[string]bool{
		"temperature": b.Temperature != 0, "top_k": b.TopK != nil, "top_p": b.TopP != nil, "min_p": b.MinP != nil,
		"seed": b.Seed != nil, "ignore_eos": b.IgnoreEOS, "stop": len(b.Stop) > 0, "stream": b.Stream,
		"stream_options": b.StreamOptions != nil, "return_tokens_as_token_ids": b.ReturnTokensAsTokenIDs,
		"cache_salt": b.CacheSalt != "", "cache_prompt": b.CachePrompt != nil, "user": b.User != "",
	}
	for _, p := range requestParameters {
		if set[p] {
			out = append(out, p)
		}
	}
	if b.Logprobs > 0 {
		out = append(out, FeatureLogprobs)
	}
	if _, ids := b.Prompt.([]int); ids {
		out = append(out, FeatureTokenIDs)
	}
	return out
}

// refusalWords are what a server says when it does not support something.
const refusalWords = `(not supported|unsupported|not implemented|unknown|unrecognized|not allowed|not permitted|extra (fields|inputs)|invalid (field|parameter|argument))`

// refusalPatterns recognise a refusal of a feature in an error message. A parameter not
// listed is recognised by its name next to refusalWords.
var refusalPatterns = map[string]*regexp.Regexp{
	// llama-server: "Only one completion choice is allowed"; others: "n must be 1", "n > 1 is not supported".
	FeatureN: regexp.MustCompile(`(?i)(one completion choice|multiple (choices|completions)|\bn\b[^.]*\b(must|should|has to) be 1|\bn\b[^.]*` + refusalWords + `)`),
	FeatureTokenIDs: regexp.MustCompile(`(?i)((prompt|input)\b[^.]*\b(must|should) be (a )?(string|text)|expected (a )?string|token[ _-]?ids?\b[^.]*` +
		refusalWords + `|` + refusalWords + `[^.]*token[ _-]?ids?\b)`),
	FeatureLogprobs: regexp.MustCompile(`(?i)logprobs`),
	// A server that cannot score a prompt refuses echo, or max_tokens 0.
	FeaturePromptLogprobs: regexp.MustCompile(`(?i)(\becho\b|prompt_logprobs|max_tokens)`),
}

// refusedFeature returns the feature a server refused with this error message, given the
// request it was sent: the first feature the request uses whose refusal the message
// recognisably states, or "".
func refusedFeature(b completionRequest, message string) string {
	for _, f := range b.used() {
		re := refusalPatterns[f]
		if re == nil {
			re = regexp.MustCompile(`(?i)(\b` + regexp.QuoteMeta(f) + `\b[^.]*` + refusalWords + `|` + refusalWords + `[^.]*\b` + regexp.QuoteMeta(f) + `\b)`)
		}
		if re.MatchString(message) {
			return f
		}
	}
	return ""
}

// refused records a request the candidate refused: unsupported when it refused before
// producing tokens and the feature is not required, a failure otherwise.
func (v *verifier) refused(gr *GoldenRequest, cr *CandidateRequest) {
	f := cr.Unsupported
	reason := cr.Error
	if reason == "" {
		reason = "no reason given"
	}
	switch {
	case cr.tokens() > 0:
		v.fail(gr.ID, -1, -1, KindError, "request %s: the candidate refused %s after producing %d tokens (a refusal must come before any token): %s",
			gr.ID, describeFeature(f), cr.tokens(), reason)
	case v.opt.Require.has(f):
		v.fail(gr.ID, -1, -1, KindUnsupported, "request %s needs %s, which the candidate refused, and VerifyOptions.Require demands it: %s", gr.ID, describeFeature(f), reason)
	default:
		v.rep.Unsupported = append(v.rep.Unsupported, Refusal{Request: gr.ID, Feature: f,
			Message: fmt.Sprintf("request %s needs %s, which the candidate refused: %s", gr.ID, describeFeature(f), reason)})
	}
}
