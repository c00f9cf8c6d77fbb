// Package kernels holds the numeric inner loops of kvref: dot products, matrix–vector and
// matrix–matrix products, RMSNorm, softmax, RoPE and SwiGLU.
//
// Every reduction has exactly one order, documented here, so that results never depend on
// how work is batched, paged or threaded. The dot product of two length-n vectors works in
// eight lanes: element i is accumulated into lane i%8 as lane += float32(x[i]*y[i]) (a
// rounded multiply followed by a rounded add, never a fused multiply-add), and the lanes are
// combined at the end as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), which is the order of the
// usual 256-bit horizontal sum. Fast (assembly) versions must keep this order.
//
// # Portable and fast paths
//
// Dot, MatMulRows and Axpy each have a portable Go implementation (dotGeneric,
// matMulRowsGeneric, axpyGeneric in the *_generic.go files) that is the definition of the
// result, and on amd64 an assembly implementation beside it (*_amd64.s) that computes the
// same arithmetic in 256-bit AVX registers: one register of eight lanes per dot product,
// VMULPS then VADDPS (never VFMADD), the zero-padded tail and the horizontal sum in the
// order above. MatMulRows runs four weight rows against one, two or (with AVX-512, two
// eight-lane dot products per ZMM register) four batch vectors at a time, and prefill's
// larger batches through register-blocked products of packed inputs (gemm_amd64.go: 2×4
// and 2×6 tiles with AVX, 4×4, 4×6, 4×8, 8×2 and 8×6 with AVX-512), each dot product
// still one eight-lane accumulator in the order above. The same holds
// for AxpyRows, the exponentials of Softmax and SwiGLU (which repeat math.Exp's amd64
// arithmetic), the row dots (rowdot.go) and the products of the quantized weight types with
// their quantized inputs: Q8_0 × Q8_0 (q8input.go) and its batched form (q8batch.go), the
// legacy types against Q8_0/Q8_1 (legacyq.go), the k-quants against Q8_K (q8k.go,
// kquant.go) and their batched form (kbatch.go), each defined by its portable Go in
// integers with one fixed float order.
//
// One table, the registry (registry.go), lists every fast implementation with the CPU
// features it needs and the portable twin that defines its bits. Which ones run is decided
// when the package is initialised, from golang.org/x/sys/cpu; Restrict (or the
// environment variable KVREF_KERNELS=generic|avx|avx2|avx512) caps them at a level, so that
// an AVX-512 machine runs and tests what an AVX2-only one runs, SetPortable switches to
// the portable Go and back, and Implementations reports which implementation each kernel
// uses. Building with -tags purego (or for any other architecture) compiles the portable
// path only.
//
// # Files
//
// Each kernel family keeps one file prefix: dot (Dot, DotRowsStrided), axpy, matmul and
// gemm (the float products and their register-blocked tiles), rowdot, halfmatmul and
// decodef16 (the 16-bit formats), q8input and q8batch (the Q8_0 input and its products),
// gemmq8, legacyq and legacybatch (the legacy blocks), q8k, kquant and kbatch (the
// k-quants), exp, norm, rope, gelu and prefetch. Within a family:
//   - FAMILY.go holds the exported functions and the family's contract;
//   - FAMILY_generic.go the portable twins, named ...Generic, that define the bits;
//   - FAMILY_amd64.go the dispatch and the assembly declarations (dispatch_noasm.go
//     holds every family's dispatch for builds without assembly: -tags purego, other
//     architectures);
//   - FAMILY_LEVEL_amd64.s the assembly of one level (avx, avx2, avx512; avx512vl for
//     AVX-512 code in 256-bit registers), with shared macros in *_amd64.h;
//   - the tests compare every fast implementation with its twin at every level.
//
// The two paths return the same bits for every input, with one exception that Go itself
// does not pin down: when a result is NaN, both return a NaN, but which NaN (sign and
// payload) is unspecified, because the Go specification does not define NaN propagation
// and the compiler freely swaps the operands of + and * (x86 returns the first operand's
// NaN when both are NaN). On amd64 the only NaN the arithmetic creates (Inf-Inf, 0·Inf) is
// the default NaN 0xffc00000, so when the inputs hold no other NaN the bits agree too.
// Infinities, overflow to ±Inf, subnormals (neither path flushes them to zero) and signed
// zeros are bit-identical. Aliasing is covered as well: where an output overlaps an input,
// the fast path either gives the plain loop's result or hands the call to the portable
// code.
package kernels

// Dot returns the dot product of x and y[:len(x)] in the package's fixed reduction order.
// Like the expression y[:len(x)], it panics if cap(y) < len(x).
func Dot(x, y []float32) float32 {
	return dot(x, y[:len(x)])
}

// DotRowsStrided sets out[r] = Dot(x, w[r·stride : r·stride+len(x)]) for every r <
// len(out): x against len(out) rows that start stride floats apart (attention's scores of
// one head over the consecutive slots of a cache block), the same bits as one Dot per row.
// It panics if stride < len(x) or w ends before the last row.
func DotRowsStrided(out, x, w []float32, stride int) {
	span := stridedSpan("DotRowsStrided", "floats", len(out), len(x), stride, len(w))
	if len(out) == 0 {
		return
	}
	dotRowsStrided(out, x, w[:span], stride)
}

// ReduceLanes combines eight lane sums in the package's fixed order
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
func ReduceLanes(l0, l1, l2, l3, l4, l5, l6, l7 float32) float32 {
	a0 := l0 + l4
	a1 := l1 + l5
	a2 := l2 + l6
	a3 := l3 + l7
	return (a0 + a2) + (a1 + a3)
}
