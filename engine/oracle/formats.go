package oracle

import (
	"github.com/kvref/kvref/quant"
)

// format is the oracle's own knowledge of one cache type, written from its definition
// (quant's package documentation, and the specifications it cites) without calling quant.
type format struct {
	// rowBytes is the size of one stored row of kvHeads heads of headDim values.
	rowBytes func(kvHeads, headDim int) int
	// decode writes the values of one stored row into dst (kvHeads·headDim), exactly, from
	// the bytes alone.
	decode func(dst []float64, row []byte, kvHeads, headDim int)
	// bound writes into dst, for each element of the exact row x, how far the stored value
	// may be from it: the format's rounding, from x and its head's (or block's) own maxabs.
	// +Inf means the format cannot hold the value (a half overflowing to infinity).
	bound func(dst []float64, x []float32, kvHeads, headDim int)
}

// formats holds one entry per cache type. To add a cache type, add its entry here: a row
// size, a decoder and an error bound, written from the format's definition (see the helpers
// in decode.go and bounds.go), never by calling the codec under test.
// TestEveryCacheTypeHasAFormat fails until the entry exists.
var formats = map[quant.CacheType]format{
	quant.F32:     {rowBytes: plainRow(4), decode: decodeFloats(binary32), bound: boundF32},
	quant.F16:     {rowBytes: plainRow(2), decode: decodeFloats(binary16), bound: boundF16},
	quant.BF16:    {rowBytes: plainRow(2), decode: decodeFloats(bfloat16), bound: boundBF16},
	quant.Int8:    {rowBytes: scaledHeadRow, decode: decodeInt8, bound: boundInt8},
	quant.FP8E4M3: {rowBytes: scaledHeadRow, decode: decodeE4M3Scaled, bound: boundE4M3Scaled},
	quant.FP8E5M2: {rowBytes: plainRow(1), decode: decodeFloats(e5m2), bound: boundE5M2},
	quant.Q8_0:    {rowBytes: q8_0Row, decode: decodeQ8_0, bound: boundQ8_0},
	quant.Q4_0:    {rowBytes: q4_0Block.row, decode: q4_0Block.decode, bound: boundSymmetric(8)},
	quant.Q4_1:    {rowBytes: q4_1Block.row, decode: q4_1Block.decode, bound: boundAffine(15)},
	quant.IQ4_NL:  {rowBytes: iq4nlBlock.row, decode: iq4nlBlock.decode, bound: boundIQ4NL},
	quant.Q5_0:    {rowBytes: q5_0Block.row, decode: q5_0Block.decode, bound: boundSymmetric(16)},
	quant.Q5_1:    {rowBytes: q5_1Block.row, decode: q5_1Block.decode, bound: boundAffine(31)},
}

// plainRow is the row size of a format that stores each value in size bytes, unscaled.
func plainRow(size int) func(kvHeads, headDim int) int {
	return func(kvHeads, headDim int) int { return size * kvHeads * headDim }
}

// scaledHeadRow is the row size of int8 and fp8-e4m3: per head, a 4-byte float32 scale,
// then one byte per value.
func scaledHeadRow(kvHeads, headDim int) int { return kvHeads * (4 + headDim) }

// q8_0Row is the row size of q8_0: per 32 values, a 2-byte half scale and 32 int8 values.
func q8_0Row(kvHeads, headDim int) int { return kvHeads * headDim / 32 * 34 }
