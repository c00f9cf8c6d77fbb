//go:build amd64 && !purego

package kernels

// The dispatch of Dot, Axpy and MatMulRows. Which fast implementations may run is decided
// in registry.go (from the CPU at start-up, then by SetPortable and Restrict); here each
// call takes the fastest one that is on and whose preconditions the arguments meet, and
// falls back to the portable Go otherwise. The float kernels use AVX (256-bit VMULPS,
// VADDPS, VMASKMOVPS, ...) and, for the prefill blocks, AVX-512F; they never fuse a
// multiply with an add (no FMA instruction), which would round differently from the
// portable Go. The row dots (rowdot_amd64.go) need AVX2 and F16C, the Q8_0 products
// (q8input_amd64.go) AVX2 or AVX-512 VNNI, the exponentials (exp_amd64.go) FMA with
// AVX-512F (exp_avx512_amd64.s) or with AVX2 (exp_avx2_amd64.s), because they repeat what math.Exp
// computes with FMA.
