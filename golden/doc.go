// Package golden turns kvref into a conformance suite for other engines' KV caches.
//
// The pieces, in the order data flows through them:
//
//   - A Scenario (scenario.go) is an ordered list of events — submit a wave of requests,
//     wait until a request has produced k tokens or everything has finished, cancel a
//     request, run a number of scheduler steps, flush the cache — together with the cache
//     configuration of the reference side. Prompts are text, token ids, or parts generated
//     from seeds (prompt.go), so that "A and B share exactly 48 tokens" is exact.
//   - The built-in library (library.go) holds one scenario per class of cache bug that
//     shipped engines have had, parameterised by block size and pool size; Suite returns
//     the "default" or "full" suite, or, for a model with sliding-window attention, the
//     "sliding" one (sliding.go), or, for a model with cache groups (sliding layers beside
//     full ones, Gemma 2 and 3), the "hybrid" one (hybrid.go).
//   - Record (record.go) runs a scenario through kvref's own scheduler and paged cache and
//     returns a Golden: per request the prompt ids, the output ids and per step the top-k
//     log-probabilities, the margin between the first two and, optionally, the full
//     logits. kvref's cached logits are bit-identical to its cache-free reference, so a
//     golden does not depend on block size, batching or cache hits. Following the pool's
//     events, it also records which part of each prefix hit lay on blocks only a sliding
//     window had released (reclaimed.go): a candidate may recompute those.
//   - A Candidate (candidate.go) is what another engine produced for the same scenarios:
//     read from a JSON Lines dump, collected from an OpenAI-compatible server by a Target
//     (target.go), or produced by kvref itself (Replay).
//   - Verify (verify.go) compares a candidate with the goldens under a Policy, teacher
//     forcing the reference on the candidate's own token history when an Oracle (a model)
//     is available, and returns a Report (report.go) that prints as a table, JSON or JUnit
//     XML.
//
// Each scenario ends pass, fail, unsupported (the candidate refused a feature the scenario
// needs, recognised in features.go), vacuous (right outputs, but the cache path was not
// exercised: cache_check.go, which also reads the cache-hit evidence of evidence.go) or
// missing. docs/golden.md documents the file formats, the outcomes and the tolerance
// policy for users.
package golden
