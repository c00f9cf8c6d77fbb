package kernels

import (
	"encoding/binary"
	"sync"
)

// Batched products of the legacy types without a min (Q4_0, Q5_0): their row dot is
// DotQ8_0Q8's arithmetic on the codes less the type's offset (legacyq.go: the same lanes,
// the same p_l·(d·dx) step), and those codes fit int8 (q − 8 in −8..7, q − 16 in −16..15).
// So a panel of rows is rewritten as Q8_0 blocks (the same fp16 scale, the codes less the
// offset), exactly, and multiplied by DotQ8_0Batch's kernels: the batch's inputs meet each
// row's blocks at once (VPDPBUSD with AVX-512 VNNI, VPMADDUBSW with AVX2) instead of one
// row dot per vector. Batches under legacyBatchMin keep the row dots. With AVX-512 VNNI,
// the rows of small batches skip the rewrite: gemmQ4_0x2x4VNNI and gemmQ5_0x2x4VNNI spread
// their codes in registers and multiply them where they lie, with the same arithmetic.

// DotQ4_0Batch sets out[v·stride + r] to DotQ4_0Q8Rows's product of input vector v of x
// with row r of the rows Q4_0 rows in w (x.Len()/32·18 bytes each), for every vector and
// row, bit for bit. It panics if w or out is too short.
func DotQ4_0Batch(out []float32, stride int, x *Q8Batch, w []byte, rows int) {
	dotLegacyBatch(&lQ4_0, q4_0AsQ8_0, out, stride, x, w, rows)
}

// DotQ5_0Batch is DotQ4_0Batch for Q5_0 rows (x.Len()/32·22 bytes each).
func DotQ5_0Batch(out []float32, stride int, x *Q8Batch, w []byte, rows int) {
	dotLegacyBatch(&lQ5_0, q5_0AsQ8_0, out, stride, x, w, rows)
}

// legacyBatchMin is the fewest vectors for which the rows are rewritten: the rewrite costs
// about as much as eight vectors' row dots save (TinyLlama Q4_0 decode steps on Zen 4,
// row dots against the rewrite: batch 2 41–43 against 107 ms, 4 75–77 against 105–110, 8
// 147–157 against 143–151, 16 287–297 against 215–235, 32 587 against 360–365). Q4_0 and
// Q5_0 rows with AVX-512 VNNI are not rewritten for batches up to legacyDirectMaxBatch
// (dotLegacyBatchDirect) and go batched from one group of four vectors: 2048 × 2048 Q4_0
// by 4 on Zen 5, one thread, 156–186 cpu-GFLOP/s against 102–113 in row dots.
const legacyBatchMin = 8

// legacyDirectMaxBatch bounds the batches whose Q4_0 and Q5_0 rows dotLegacyBatchDirect
// multiplies where they lie: the direct kernel spreads a pair of blocks' nibbles for every
// group of four vectors, the rewrite once for all of them, so a larger batch pays the
// rewrite back. One thread on Zen 5, the two ways alternated call by call, medians,
// cpu-GFLOP/s direct against rewritten (the rewrite in AVX2): Q4_0 2048 × 2048 by 8 169
// against 153, by 16 163 and 164, by 32 167 against 178; 2048 × 5632 by 16 154 against 136,
// by 32 157 and 155. Q5_0 (a mask step more per row): 2048 × 2048 by 8 157 against 147, by
// 16 152 against 163; 2048 × 5632 by 8 141 against 116, by 32 146 against 154.
var legacyDirectMaxBatch = map[*legacyFormat]int{&lQ4_0: 16, &lQ5_0: 8}

// legacyScratch recycles the panels rewritten as Q8_0.
var legacyScratch = sync.Pool{New: func() any { return new([]byte) }}

// dotLegacyBatch checks the sizes and multiplies the rows of format f, a panel at a time
// rewritten as Q8_0 by asQ8, by the batch.
func dotLegacyBatch(f *legacyFormat, asQ8 func(dst, src []byte), out []float32, stride int, x *Q8Batch, w []byte, rows int) {
	nb := x.n / QBlockLen
	rb := nb * f.blockBytes
	w = w[:rowsBytes("Dot"+f.name+"Batch", rows, rb)]
	c := len(x.in)
	if c == 0 || rows == 0 {
		return
	}
	checkBatchOut("Dot"+f.name+"Batch", out, stride, c, rows)
	if dotLegacyBatchDirect(f, out, stride, x, w, rows) {
		return
	}
	if c < legacyBatchMin {
		legacyRowDots(f, out, stride, x, w, rows, 0)
		return
	}
	q8rb := nb * Q8_0BlockBytes
	panel := max(4, panelRows(q8rb)&^3) // whole groups for the Q8_0 kernels
	buf := legacyScratch.Get().(*[]byte)
	defer legacyScratch.Put(buf)
	*buf = grow(*buf, min(panel, rows)*q8rb)
	for r0 := 0; r0 < rows; r0 += panel {
		r1 := min(r0+panel, rows)
		q8 := (*buf)[:(r1-r0)*q8rb]
		asQ8(q8, w[r0*rb:r1*rb])
		matMulQ8_0(out[r0:], q8, x, stride, q8rb, 0, r1-r0)
	}
}

// legacyRowDots multiplies the rows rows of format f in w by the vectors of x from v0 on,
// one vector at a time in the row dots, a panel of rows at a time (so that every vector
// finds the panel in the caches).
func legacyRowDots(f *legacyFormat, out []float32, stride int, x *Q8Batch, w []byte, rows, v0 int) {
	rb := x.n / QBlockLen * f.blockBytes
	panel := panelRows(rb)
	for r0 := 0; r0 < rows && v0 < len(x.in); r0 += panel {
		r1 := min(r0+panel, rows)
		for v := v0; v < len(x.in); v++ {
			dotLegacyRows(f, out[v*stride+r0:v*stride+r1], x.in[v], w[r0*rb:r1*rb])
		}
	}
}

// Per byte of a uint64: the low nibbles, the bytes' lowest bits.
const (
	nibbleBytes = 0x0f0f0f0f0f0f0f0f
	lowBits     = 0x0101010101010101
)

// q4_0AsQ8_0Generic writes the Q4_0 blocks of src as Q8_0 blocks to dst (q4_0AsQ8_0's
// portable twin): the fp16 scale, then the 32 codes less 8 as int8 (value j in the low
// nibble of qs[j], 16+j in its high nibble). Eight codes at a time in a uint64: q XOR 8 is
// (q − 8) mod 16, whose bit 3 extended through the high nibble makes the int8.
// (q5_0AsQ8_0Generic repeats the block loop: one loop taking the codes from a function
// value ran at a fifth of the speed, 1.8 against 8.6 values a nanosecond on Zen 4.)
func q4_0AsQ8_0Generic(dst, src []byte) {
	le := binary.LittleEndian
	sext4 := func(q uint64) uint64 {
		v := q ^ 0x0808080808080808
		return v | (v>>3&lowBits)*0xf0
	}
	for b := range len(src) / Q4_0BlockBytes {
		s := src[b*Q4_0BlockBytes : (b+1)*Q4_0BlockBytes]
		d := dst[b*Q8_0BlockBytes : (b+1)*Q8_0BlockBytes]
		d[0], d[1] = s[0], s[1]
		lo, hi := le.Uint64(s[2:]), le.Uint64(s[10:])
		le.PutUint64(d[2:], sext4(lo&nibbleBytes))
		le.PutUint64(d[10:], sext4(hi&nibbleBytes))
		le.PutUint64(d[18:], sext4(lo>>4&nibbleBytes))
		le.PutUint64(d[26:], sext4(hi>>4&nibbleBytes))
	}
}

// bitBytes[m] has byte i set to 0x10 where bit i of m is set: a Q5_0 block's fifth bits
// for eight values.
var bitBytes = func() (t [256]uint64) {
	for m := range t {
		for i := range 8 {
			if m>>i&1 != 0 {
				t[m] |= 0x10 << (8 * i)
			}
		}
	}
	return t
}()

// q5_0AsQ8_0Generic writes the Q5_0 blocks of src as Q8_0 blocks to dst (q5_0AsQ8_0's
// portable twin): the fp16 scale, then the 32 codes (the nibbles of qs as in Q4_0, bit j of
// qh the fifth bit of value j) less 16 as int8; q XOR 16 is (q − 16) mod 32, whose bit 4
// extended makes the int8.
func q5_0AsQ8_0Generic(dst, src []byte) {
	le := binary.LittleEndian
	sext5 := func(q uint64) uint64 {
		v := q ^ 0x1010101010101010
		return v | (v>>4&lowBits)*0xe0
	}
	for b := range len(src) / Q5_0BlockBytes {
		s := src[b*Q5_0BlockBytes : (b+1)*Q5_0BlockBytes]
		d := dst[b*Q8_0BlockBytes : (b+1)*Q8_0BlockBytes]
		d[0], d[1] = s[0], s[1]
		qh := s[2:6]
		lo, hi := le.Uint64(s[6:]), le.Uint64(s[14:])
		le.PutUint64(d[2:], sext5(lo&nibbleBytes|bitBytes[qh[0]]))
		le.PutUint64(d[10:], sext5(hi&nibbleBytes|bitBytes[qh[1]]))
		le.PutUint64(d[18:], sext5(lo>>4&nibbleBytes|bitBytes[qh[2]]))
		le.PutUint64(d[26:], sext5(hi>>4&nibbleBytes|bitBytes[qh[3]]))
	}
}
