package kernels

import "github.com/kvref/kvref/internal/half"

// The legacy ggml weight blocks of 32 values (Q4_0, Q4_1, Q5_0, Q5_1) are multiplied by an
// input quantized to Q8_0 (Q4_0, Q5_0) or Q8_1 (Q4_1, Q5_1: Q8_0 plus s, the block's scale
// times the sum of its codes, which Q8Input carries too), as ggml's CPU backend multiplies
// them, in DotQ8_0Q8's order: for block b, lane l (0..7) collects the exact integer sum
//
//	p_l = Σ (q_i − o)·x_i  over the four values i = 4l..4l+3
//
// of the weight codes q (0..15, or 0..31 with the fifth bit from qh; o = 8 or 16 for the
// types without a min, 0 for those with one) times the input's, and with s = fp16(d)·dx
// (exact in float32)
//
//	acc[8·(b mod 2) + l] += float32(float32(p_l)·s)
//
// and for the types with a min m, then acc[8·(b mod 2)] += float32(fp16(m)·sx) (exact
// too). The result is ReduceLanes(acc[0]+acc[8], ..., acc[7]+acc[15]).

// Bytes per block of the legacy weight types.
const (
	Q4_1BlockBytes = 20 // fp16 d · fp16 m · qs[16]
	Q5_0BlockBytes = 22 // fp16 d · qh[4] · qs[16]
	Q5_1BlockBytes = 24 // fp16 d · fp16 m · qh[4] · qs[16]
)

// legacyBlock is one decoded legacy block: each value's code less the type's offset, its
// scale d and min m widened, and whether it has a min.
type legacyBlock struct {
	q      [QBlockLen]int32
	d, m   float32
	hasMin bool
}

// legacyDecoder fills a legacyBlock from a stored block.
type legacyDecoder func(k *legacyBlock, blk []byte)

// nibbles stores the 32 4-bit codes of qs (value j in the low nibble of qs[j], value 16+j
// in its high nibble) less offset, plus 16 for each value whose bit is set in qh (bit j for
// value j), into q.
func nibbles(q *[QBlockLen]int32, qs []byte, qh uint32, offset int32) {
	for j := range 16 {
		q[j] = int32(qs[j]&0x0f|uint8(qh>>j&1)<<4) - offset
		q[16+j] = int32(qs[j]>>4|uint8(qh>>(16+j)&1)<<4) - offset
	}
}

func le32(b []byte) uint32 { return uint32(le16(b)) | uint32(le16(b[2:]))<<16 }

func legacyQ4_0(k *legacyBlock, blk []byte) {
	nibbles(&k.q, blk[2:18], 0, 8)
	k.d, k.hasMin = half.F16ToF32(le16(blk)), false
}

func legacyQ4_1(k *legacyBlock, blk []byte) {
	nibbles(&k.q, blk[4:20], 0, 0)
	k.d, k.m, k.hasMin = half.F16ToF32(le16(blk)), half.F16ToF32(le16(blk[2:])), true
}

func legacyQ5_0(k *legacyBlock, blk []byte) {
	nibbles(&k.q, blk[6:22], le32(blk[2:]), 16)
	k.d, k.hasMin = half.F16ToF32(le16(blk)), false
}

func legacyQ5_1(k *legacyBlock, blk []byte) {
	nibbles(&k.q, blk[8:24], le32(blk[4:]), 0)
	k.d, k.m, k.hasMin = half.F16ToF32(le16(blk)), half.F16ToF32(le16(blk[2:])), true
}

// legacyFormat is one legacy weight type: its name, its block size and its decoder.
type legacyFormat struct {
	name       string
	blockBytes int
	decode     legacyDecoder
}

// The legacy formats, for the exported row dots.
var (
	lQ4_0 = legacyFormat{"Q4_0", Q4_0BlockBytes, legacyQ4_0}
	lQ4_1 = legacyFormat{"Q4_1", Q4_1BlockBytes, legacyQ4_1}
	lQ5_0 = legacyFormat{"Q5_0", Q5_0BlockBytes, legacyQ5_0}
	lQ5_1 = legacyFormat{"Q5_1", Q5_1BlockBytes, legacyQ5_1}
)

// DotQ4_0Q8Rows sets out[r] to the product of x with row r of the Q4_0 rows in w, in the
// order the package defines for legacy rows (see legacyq.go): w holds len(out) consecutive
// rows of x.Len()/32 blocks. It panics if w is too short.
func DotQ4_0Q8Rows(out []float32, x *Q8Input, w []byte) { dotLegacyRows(&lQ4_0, out, x, w) }

// DotQ4_1Q8Rows is DotQ4_0Q8Rows for Q4_1 rows (x taken as Q8_1).
func DotQ4_1Q8Rows(out []float32, x *Q8Input, w []byte) { dotLegacyRows(&lQ4_1, out, x, w) }

// DotQ5_0Q8Rows is DotQ4_0Q8Rows for Q5_0 rows.
func DotQ5_0Q8Rows(out []float32, x *Q8Input, w []byte) { dotLegacyRows(&lQ5_0, out, x, w) }

// DotQ5_1Q8Rows is DotQ4_0Q8Rows for Q5_1 rows (x taken as Q8_1).
func DotQ5_1Q8Rows(out []float32, x *Q8Input, w []byte) { dotLegacyRows(&lQ5_1, out, x, w) }

// dotLegacyRows checks the sizes and runs the row dots of format f.
func dotLegacyRows(f *legacyFormat, out []float32, x *Q8Input, w []byte) {
	if w, rb, ok := quantizedRows(f.name, "Q8Rows", out, w, x.n, QBlockLen, f.blockBytes); ok {
		dotLegacyRowsFast(f, out, x, w, rb)
	}
}
