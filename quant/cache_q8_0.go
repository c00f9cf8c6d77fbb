package quant

import (
	"encoding/binary"

	"github.com/kvref/kvref/internal/half"
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

// decodeQ8Range decodes len(dst) values of a q8_0 row, starting at element e0 (counting
// from the row's start), as ggml's dequantize_row_q8_0 does: float32(q) times the block's
// fp16 scale. It walks one block segment at a time.
func decodeQ8Range(dst []float32, row []byte, e0 int) {
	for i := 0; i < len(dst); {
		e := e0 + i
		blk := row[e/q8BlockLen*q8BlockBytes:]
		blk = blk[:q8BlockBytes]
		d := half.F16Table[binary.LittleEndian.Uint16(blk)]
		o := e % q8BlockLen
		ds := dst[i:min(i+q8BlockLen-o, len(dst))]
		qs := blk[2+o : 2+o+len(ds)]
		for j, b := range qs {
			ds[j] = float32(int8(b)) * d
		}
		i += len(ds)
	}
}
