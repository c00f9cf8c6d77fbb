// Package oracle checks a KV cache from outside the engine's arithmetic, for every cache
// type: what --check cannot see.
//
// The engine's bitwise check (engine.Verifier, kvref run --check) compares the cached path
// with the cache-free reference, and both share everything but the cache: the forward pass,
// the attention kernels' arithmetic, and the cache type's codec (the reference applies the
// same quantize→dequantize round trip to K and V). A bug in a codec — head 0's scale used
// for every head, an off-by-one head index — is identical on both sides, and passes. This
// package does not use the codecs: it decodes the bytes the pool stores with reference
// decoders of its own, written in float64 from the formats' definitions (formats.go), and
// checks three things for every position of a sequence, in every layer:
//
//  1. Storage: each stored key and value element, decoded independently, is within the
//     format's error bound of the exact value the model computed (the reference's K/V before
//     the round trip, model.Runner.ReferenceTrace). The bound is computed from the exact
//     values (a head's or block's own maxabs), never from what was stored.
//  2. Reading: the engine's attention output for the position's query, computed by the
//     engine's own kernels over the pool (attention.PagedBatch: the batched prefill path and
//     the decode path, through the block table), matches attention computed in float64 from
//     the independently decoded rows, within the float32 rounding of the engine's kernels.
//  3. The result: the engine's attention output is within the bound that the format's
//     element bounds imply of attention computed in float64 from the exact keys and values:
//     (e^{2ε}−1)·(Σ_t w_t|v_t| + max_t e_v) + max_t e_v + the rounding of 2, where
//     ε = scale·max_t Σ_i |q_i|·e_k(t, i) bounds the change of any score and e_k, e_v are the
//     element bounds.
//
// Check reports the largest ratio of error to bound for each of the three, and fails with an
// *Error naming the layer, position, head and element of the first violation.
package oracle
