package quant

import (
	"encoding/binary"
	"github.com/kvref/kvref/internal/half"

	"github.com/kvref/kvref/internal/kernels"
)

// The q8_0 cache type is llama.cpp's block_q8_0, byte for byte: the row is cut into
// blocks of 32 consecutive values (a block spans several heads when headDim < 32, and a
// head spans several blocks when headDim > 32), and each block is stored as an fp16
// scale d (2 bytes, little-endian) followed by 32 int8 values. Quantization follows
// ggml's quantize_row_q8_0_ref:
//
//	amax = max |x|;  d = amax/127;  id = d != 0 ? 1/d : 0;  q = roundf(x*id)
//
// with every operation in float32 and roundf rounding half away from zero; the scale is
// stored as fp16(d). A value decodes as float32(q) * half.F16ToF32(stored d), as ggml's
// dequantize_row_q8_0 does. Where ggml's C code is undefined (1/d overflows to Inf for a
// subnormal d, and (int8_t)roundf(±Inf or NaN) is undefined behaviour), kvref clamps to
// ±127 and maps NaN to 0; the fp16 scale of such a block is 0 anyway, so it decodes to
// zeros either way.

const (
	q8BlockLen   = 32             // values per block (ggml's QK8_0)
	q8BlockBytes = 2 + q8BlockLen // fp16 scale + 32 int8 values
)

func encodeQ8_0(dst []byte, src []float32) {
	for blk := 0; blk*q8BlockLen < len(src); blk++ {
		x := src[blk*q8BlockLen : (blk+1)*q8BlockLen]
		out := dst[blk*q8BlockBytes : (blk+1)*q8BlockBytes]
		d := maxAbs(x) / int8Max
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(out, half.F32ToF16(d))
		qs := out[2:]
		qs = qs[:len(x)]
		for i, v := range x {
			qs[i] = uint8(roundToInt8(float32(v * id)))
		}
	}
}

func decodeQ8_0(dst []float32, src []byte) {
	for blk := 0; blk*q8BlockLen < len(dst); blk++ {
		x := dst[blk*q8BlockLen : (blk+1)*q8BlockLen]
		in := src[blk*q8BlockBytes : (blk+1)*q8BlockBytes]
		d := half.F16Table[binary.LittleEndian.Uint16(in)]
		qs := in[2:]
		qs = qs[:len(x)]
		for i, b := range qs {
			x[i] = float32(int8(b)) * d
		}
	}
}

// q8At returns element e of a q8_0 row (counting from the row's start), exactly as
// decodeQ8_0 computes it.
func q8At(row []byte, e int) float32 {
	blk := row[e/q8BlockLen*q8BlockBytes:]
	d := half.F16Table[binary.LittleEndian.Uint16(blk)]
	return float32(float32(int8(blk[2+e%q8BlockLen])) * d)
}

// dotQ8_0 is kernels.Dot(q, decoded head) for the head whose first element is element e0
// of the row, in the same lane order. When e0 is a multiple of 8, every group of eight
// lanes lies inside one block (blocks are 32 long), so the block's scale is loaded once
// per group; otherwise each element finds its own block.
func dotQ8_0(q []float32, row []byte, e0 int) float32 {
	n := len(q)
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	i := 0
	if e0%8 == 0 {
		for ; i+8 <= n; i += 8 {
			e := e0 + i
			blk := row[e/q8BlockLen*q8BlockBytes:]
			blk = blk[:q8BlockBytes]
			d := half.F16Table[binary.LittleEndian.Uint16(blk)]
			o := 2 + e%q8BlockLen
			bs := blk[o : o+8 : o+8]
			qs := q[i : i+8 : i+8]
			l0 += float32(qs[0] * float32(float32(int8(bs[0]))*d))
			l1 += float32(qs[1] * float32(float32(int8(bs[1]))*d))
			l2 += float32(qs[2] * float32(float32(int8(bs[2]))*d))
			l3 += float32(qs[3] * float32(float32(int8(bs[3]))*d))
			l4 += float32(qs[4] * float32(float32(int8(bs[4]))*d))
			l5 += float32(qs[5] * float32(float32(int8(bs[5]))*d))
			l6 += float32(qs[6] * float32(float32(int8(bs[6]))*d))
			l7 += float32(qs[7] * float32(float32(int8(bs[7]))*d))
		}
	} else {
		for ; i+8 <= n; i += 8 {
			e := e0 + i
			qs := q[i : i+8 : i+8]
			l0 += float32(qs[0] * q8At(row, e))
			l1 += float32(qs[1] * q8At(row, e+1))
			l2 += float32(qs[2] * q8At(row, e+2))
			l3 += float32(qs[3] * q8At(row, e+3))
			l4 += float32(qs[4] * q8At(row, e+4))
			l5 += float32(qs[5] * q8At(row, e+5))
			l6 += float32(qs[6] * q8At(row, e+6))
			l7 += float32(qs[7] * q8At(row, e+7))
		}
	}
	var tail [8]float32
	for j := 0; i+j < n; j++ {
		tail[j] = float32(q[i+j] * q8At(row, e0+i+j))
	}
	return kernels.ReduceLanes(l0+tail[0], l1+tail[1], l2+tail[2], l3+tail[3],
		l4+tail[4], l5+tail[5], l6+tail[6], l7+tail[7])
}

// axpyQ8_0 is kernels.Axpy(dst, a, decoded head) for the head whose first element is
// element e0 of the row. It walks the head one block segment at a time.
func axpyQ8_0(dst []float32, a float32, row []byte, e0 int) {
	for i := 0; i < len(dst); {
		e := e0 + i
		blk := row[e/q8BlockLen*q8BlockBytes:]
		blk = blk[:q8BlockBytes]
		d := half.F16Table[binary.LittleEndian.Uint16(blk)]
		o := e % q8BlockLen
		seg := min(q8BlockLen-o, len(dst)-i)
		qs := blk[2+o : 2+o+seg]
		ds := dst[i : i+seg]
		qs = qs[:len(ds)]
		for j := range ds {
			ds[j] += float32(a * float32(float32(int8(qs[j]))*d))
		}
		i += seg
	}
}
