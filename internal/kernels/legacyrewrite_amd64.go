//go:build amd64 && !purego

package kernels

// q4_0AsQ8_0AVX2 is q4_0AsQ8_0Generic for blocks > 0 blocks of src, written to dst: a
// block's 16 bytes of nibbles split into the low and the high ones side by side in a YMM
// register, less 8 (VPSUBB). Implemented in legacyrewrite_amd64.s.
//
//go:noescape
func q4_0AsQ8_0AVX2(dst, src *byte, blocks int)

// q5_0AsQ8_0AVX2 is q5_0AsQ8_0Generic for blocks > 0 blocks: the nibbles as in
// q4_0AsQ8_0AVX2, each value's fifth bit picked out of qh (VPSHUFB of its byte, VPAND of
// its bit, VPCMPEQB) as 16, less 16. Implemented in legacyrewrite_amd64.s.
//
//go:noescape
func q5_0AsQ8_0AVX2(dst, src *byte, blocks int)

// q4_0AsQ8_0 writes the Q4_0 blocks of src as Q8_0 blocks to dst, q4_0AsQ8_0Generic's
// bytes. dst holds at least as many blocks as src.
func q4_0AsQ8_0(dst, src []byte) {
	rewriteAsQ8_0(dst, src, Q4_0BlockBytes, q4_0AsQ8_0AVX2, q4_0AsQ8_0Generic)
}

// q5_0AsQ8_0 writes the Q5_0 blocks of src as Q8_0 blocks to dst, q5_0AsQ8_0Generic's
// bytes. dst holds at least as many blocks as src.
func q5_0AsQ8_0(dst, src []byte) {
	rewriteAsQ8_0(dst, src, Q5_0BlockBytes, q5_0AsQ8_0AVX2, q5_0AsQ8_0Generic)
}

// rewriteAsQ8_0 rewrites the blocks of blockBytes bytes in src as Q8_0 blocks in dst, with
// the AVX2 kernel fast when it is on, else with the portable twin.
func rewriteAsQ8_0(dst, src []byte, blockBytes int, fast func(dst, src *byte, blocks int), twin func(dst, src []byte)) {
	blocks := len(src) / blockBytes
	if !implLegacyRewriteAVX2.on || blocks == 0 {
		twin(dst, src)
		return
	}
	_ = dst[blocks*Q8_0BlockBytes-1]
	fast(&dst[0], &src[0], blocks)
}
