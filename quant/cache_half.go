package quant

import (
	"encoding/binary"

	"github.com/kvref/kvref/internal/half"
	"github.com/kvref/kvref/internal/kernels"
)

// The f16 and bf16 cache types store each value as 2 bytes, little-endian, rounded to
// nearest even by F32ToF16 or F32ToBF16 and widened back exactly.

// encodeF16 is kernels.EncodeF16, half.F32ToF16 of every value (F16C where the CPU has it,
// the same bits: its test compares every half's neighbourhood with the portable rounding).
func encodeF16(dst []byte, src []float32) { kernels.EncodeF16(dst, src) }

func encodeBF16(dst []byte, src []float32) { encodeHalves(dst, src, half.F32ToBF16) }

// encodeHalves stores round(v) for every value v of src, 2 bytes little-endian each.
func encodeHalves(dst []byte, src []float32, round func(float32) uint16) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], round(v))
	}
}

// decodeF16 is kernels.DecodeF16, which widens every half exactly (F16C where the CPU has
// it; its test compares all 65536 halves with half.F16ToF32).
func decodeF16(dst []float32, src []byte) { kernels.DecodeF16(dst, src) }

// decodeBF16 is kernels.DecodeBF16.
func decodeBF16(dst []float32, src []byte) { kernels.DecodeBF16(dst, src) }
