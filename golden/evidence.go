package golden

// The evidence a candidate's cached prompt tokens are read from, in the order Target reads
// a response: the first one present is used, and the report says which, per scenario.
const (
	// EvidenceCachedTokens is usage.prompt_tokens_details.cached_tokens (OpenAI, vLLM with
	// --enable-prompt-tokens-details, SGLang, kvref serve), and a dump's cached_tokens.
	EvidenceCachedTokens = "cached_tokens"
	// EvidenceCacheN is timings.cache_n: the prompt tokens llama-server took from its cache,
	// reported by versions from mid-2025 on.
	EvidenceCacheN = "cache_n"
	// EvidencePromptN is usage.prompt_tokens − timings.prompt_n: llama-server (c392e50 and
	// other versions without cache_n) reports the prompt tokens it computed in
	// timings.prompt_n, so the rest were served from its cache.
	EvidencePromptN = "prompt_n"
	// EvidenceKvref is kvref's own count, in a --self replay.
	EvidenceKvref = "kvref"
	// EvidenceNone is the fallback: the candidate reports none of the above, so cache
	// expectations are unchecked (noted in the report; --require cache-report fails it).
	EvidenceNone = "none"
)

// cacheEvidence returns the prompt tokens a response says came from the cache and the
// evidence it was read from, or nil and EvidenceNone.
func (r *completionResponse) cacheEvidence() (*int, string) {
	if r.Usage != nil && r.Usage.PromptTokensDetails != nil && r.Usage.PromptTokensDetails.CachedTokens != nil {
		return r.Usage.PromptTokensDetails.CachedTokens, EvidenceCachedTokens
	}
	if r.Timings != nil && r.Timings.CacheN != nil {
		return r.Timings.CacheN, EvidenceCacheN
	}
	if r.Timings != nil && r.Timings.PromptN != nil && r.Usage != nil && r.Usage.PromptTokens != nil {
		n := *r.Usage.PromptTokens - *r.Timings.PromptN
		return &n, EvidencePromptN
	}
	return nil, EvidenceNone
}
