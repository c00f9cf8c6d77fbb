// Package quant holds kvref's element formats and its K/V-cache codecs.
//
// # Scalar formats
//
// F16ToF32/F32ToF16 (IEEE binary16), BF16ToF32/F32ToBF16 (bfloat16) and the two OCP
// 8-bit formats FP8E4M3ToF32/F32ToFP8E4M3 and FP8E5M2ToF32/F32ToFP8E5M2 convert single
// values. Every narrowing conversion rounds to nearest, ties to even. Half and bfloat16
// overflow to ±Inf as IEEE 754 requires; the FP8 conversions saturate to the largest
// finite value (E4M3 has no infinity to overflow to, and kvref saturates E5M2 too, Inf
// included, so that an outlier cannot put an infinity into the cache). NaN stays NaN.
//
// # Cache types
//
// A K/V cache row is one token's K (or V) projection in one layer: kvHeads heads of
// headDim float32 values, the heads one after another. A CacheType says how such a row is
// stored. Bytes per token for a model are 2 · layers · RowBytes(kvHeads, headDim); for
// the unscaled types that is the familiar 2 · layers · kvHeads · headDim ·
// bytes_per_element, and for the scaled types RowBytes adds the scales.
//
//	type      bytes per row              element              scale
//	f32       4·n                        float32              none
//	f16       2·n                        IEEE half            none
//	bf16      2·n                        bfloat16             none
//	int8      kvHeads·(4+headDim)        int8, ±127           float32 per token per head
//	fp8-e4m3  kvHeads·(4+headDim)        OCP E4M3             float32 per token per head
//	fp8-e5m2  n                          OCP E5M2             none
//	q8_0      (n/32)·34                  int8, ±127           fp16 per 32 values
//	q4_0      (n/32)·18                  4-bit code, −8..7    fp16 per 32 values
//	q4_1      (n/32)·20                  4-bit code, 0..15    fp16 scale and fp16 min per 32 values
//	iq4_nl    (n/32)·18                  4-bit grid index     fp16 per 32 values
//	q5_0      (n/32)·22                  5-bit code, −16..15  fp16 per 32 values
//	q5_1      (n/32)·24                  5-bit code, 0..31    fp16 scale and fp16 min per 32 values
//
// (n = kvHeads·headDim; all multi-byte fields little-endian.)
//
// Why these, and why this way:
//
//   - f32 is exact: with it cached decoding must equal the cache-free recomputation bit for
//     bit, which is how kvref checks its cache bookkeeping.
//   - f16 and bf16 are the two 16-bit formats engines actually keep caches in. f16 has
//     more precision (11 significant bits) but overflows to ±Inf above 65504 (from 65520
//     on, as IEEE rounding and llama.cpp's f16 cache do); bf16 has the float32 range but
//     only 8 significant bits. Neither needs a scale.
//   - int8 scales each head of each token on its own: attention reads a head as one
//     vector, a per-head scale adapts to each head's magnitude (heads differ a lot, and
//     some carry outliers), and the scale is written once with the token, so the cache
//     never has to requantize old entries. The scale is s = maxabs/127 and values are
//     q = clamp(round(x/s), -127, 127), rounding half away from zero; decoding is
//     float32(q)·s. kvref divides by s rather than multiplying by 1/s: the quotient is
//     correctly rounded, and 1/s overflows to +Inf when s is subnormal. (When maxabs is
//     within a few ulps of math.MaxFloat32, 127·s would round to +Inf, so s is lowered by
//     one ulp and the largest values clamp to 127: every decoded value stays finite. The
//     fp8-e4m3 scale gets the same treatment.) The scale is a
//     float32: an fp16 scale would save 2 bytes per head (1.5% of a 128-wide head) but
//     loses range (maxabs above 127·65504 or below 127·2^-24 is lost) and adds a second
//     rounding to every value.
//   - fp8-e4m3 uses the same per-head float32 scale, s = maxabs/448, so that each head's
//     largest value lands on E4M3's largest finite value and the format's 3 mantissa bits
//     are spent where the data is. Serving engines usually calibrate one scale per
//     tensor or per head offline (vLLM's k_scale and v_scale); a scale per token per
//     head needs no calibration, cannot be overrun by a later outlier, and keeps the
//     error bound local to the head, for 4 bytes per head.
//   - fp8-e5m2 has no scale, like vLLM's fp8_e5m2 cache: its range (2^-16 to 57344) covers
//     K/V activations without one, at 2 mantissa bits. Out-of-range values saturate.
//   - q8_0 is llama.cpp's block_q8_0 byte for byte (ggml's quantize_row_q8_0_ref; the
//     details are in cache_q8_0.go), so a kvref q8_0 cache can be compared with llama.cpp's
//     --cache-type-k q8_0.
//     Its blocks run across the row, not per head, hence Validate's multiple-of-32 rule.
//     Its fp16 scale is the format's weak point: a block with maxabs above 65504·127 ≈
//     8.3e6 gets an infinite scale and decodes to ±Inf and NaN, exactly as in llama.cpp;
//     and a block with maxabs below 2^-14·127 ≈ 0.0078 has a subnormal fp16 scale and loses
//     relative precision (below 127·2^-25 ≈ 3.8e-6 it decodes to zeros).
//   - q4_0, q4_1, iq4_nl, q5_0 and q5_1 are the rest of llama.cpp's --cache-type-k list,
//     ggml's block formats byte for byte (cache_block.go has the layouts), encoded as
//     llama.cpp's CPU backend encodes a cache row: ggml's reference quantizers, and for
//     iq4_nl quantize_row_iq4_nl_ref, a least-squares scale without the search that
//     llama-quantize adds for weights (cache_iq4_nl.go). Their blocks run across the row
//     like q8_0's. At 4.5 to 6 bits per value they are the small end of the cache: the
//     fp16 scale (and q4_1's and q5_1's fp16 minimum) per 32 values costs 0.5 or 1 bit per
//     value whatever the head width. q4_0 and q5_0 are symmetric around zero with a
//     lopsided grid (−8d..7d); q4_1 and q5_1 fit [min, max] and represent a constant
//     block exactly; iq4_nl's sixteen grid points crowd near zero like a normal
//     distribution's values, but it has no zero: an exact zero is stored as d·1.
//
// Inputs are expected to be finite. NaN and Inf inputs produce deterministic rows, but
// their values are meaningless (for example, an Inf in an int8 head makes its scale
// infinite). Negative zero is not preserved by the scaled types: an all-zero head decodes
// to +0, except that q4_0, q5_0 and iq4_nl decode an all-zero block to −0, as ggml does.
//
// # Error bounds
//
// For an input x and its round trip x̂ = Decode(Encode(x)), the tests assert, per element:
//
//	f32        x̂ == x (bitwise)
//	f16        |x̂−x| <= 2^-11·|x| for 2^-14 <= |x| < 65520, <= 2^-25 below; ±Inf at and above 65520
//	bf16       |x̂−x| <= 2^-8·|x| for normal |x|, <= 2^-134 for subnormal |x|
//	int8       |x̂−x| <= s/2 + 2^-20·m + 2^-140
//	fp8-e4m3   |x̂−x| <= s·u(x/s) + 2^-20·m + 2^-140
//	fp8-e5m2   |x̂−x| <= 2^-3·|x| for 2^-14 <= |x| <= 57344, <= 2^-17 below; ±57344 above
//	q8_0       |x̂−x| <= d/2 + 127·max(2^-11·d, 2^-25) + 2^-20·m + 2^-140, while d < 65520
//	q4_0       |x̂−x| <= d·(1/2 + e) + 8·e16(d) + 2^-20·m + 2^-140,     d = m/8, while d < 65520
//	q5_0       |x̂−x| <= d·(1/2 + e) + 16·e16(d) + 2^-20·m + 2^-140,    d = m/16, while d < 65520
//	q4_1       |x̂−x| <= r/2 + 15·e16(r) + e16(|lo|) + 2^-20·(|x| + |lo| + 16·r) + 2^-140,  r = (hi−lo)/15
//	q5_1       |x̂−x| <= r/2 + 31·e16(r) + e16(|lo|) + 2^-20·(|x| + |lo| + 32·r) + 2^-140,  r = (hi−lo)/31
//	                      (both while r and |lo| < 65520)
//	iq4_nl     |x̂−x| <= 14·|d₀| + 127·|D − d₀| + 2^-20·m + 2^-140,    d₀ = xmax/−127, D the stored scale
//
// where m is the head's (q8_0: the block's) maxabs, s = m/127 (int8) or m/448 (fp8-e4m3)
// in float32, d = m/127 in float32, and u(r) half an E4M3 ulp at the float32 quotient
// r = x/s: 2^(⌊log2|r|⌋−4) for |r| >= 2^-6 and 2^-10 below. The leading
// terms are half a quantization step; 127·max(2^-11·d, 2^-25) bounds the fp16 rounding of
// q8_0's scale (at most 127 steps of |fp16(d)−d|); 2^-20·m covers the float32 roundings of
// the quotient, the scale and the decoding product; 2^-140 covers subnormal scales, whose
// rounding is absolute (127·2^-150).
//
// For the 4- and 5-bit types, e16(v) = max(2^-11·v, 2^-25) bounds one fp16 rounding (of
// the scale, times the largest code; of q4_1's and q5_1's minimum); lo and hi are the
// block's smallest and largest value and xmax its first value of largest magnitude. q4_0
// and q5_0's grids reach one step further on the side of xmax than on the other, so a
// value of the other sign beyond 7.5 (15.5) steps clamps: e = max(0, t − 7.5) with
// t = −8·x/xmax (q5_0: max(0, t − 15.5), t = −16·x/xmax), up to one step. iq4_nl has no
// half-step bound: each code is the grid point nearest to x/d₀ (the widest gap is 24
// units, and the grid reaches 113 on the side opposite to xmax, so at most 14·|d₀| away),
// and the least-squares scale D replaces d₀. Where a scale (or minimum) overflows fp16,
// the block decodes to ±Inf and NaN, as in llama.cpp.
//
// # Reading a head
//
// Attention reads the cache through DotHead and AxpyHead, which are bit-for-bit equal to
// decoding the row and calling kernels.Dot or kernels.Axpy (cache_head.go): most types
// decode the head into a stack buffer with the functions Decode uses and call the kernels
// themselves; f32 reads the bytes in place, f16 and bf16 use the SIMD row dots of
// internal/kernels, and the one-byte types (int8, fp8-e4m3, fp8-e5m2) accumulate their
// table lookups in kernels.Dot's eight-lane order with the same tail handling. This keeps
// a quantized cache's cached decoding bitwise equal to the cache-free reference, which
// applies RoundTrip to K and V.
package quant
