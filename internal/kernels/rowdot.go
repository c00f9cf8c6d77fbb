package kernels

import "fmt"

// Fused row dots: the dot product of a float32 vector with a weight row kept in its stored
// form, decoded on the fly. Each one returns exactly Dot(x, v), bit for bit, where v is the
// row decoded to float32 (IEEE half, bfloat16, or ggml's Q4_0 blocks decoded with the
// float32 operations of ggml's dequantize_row_q4_0, as package quant's DequantizeRow does):
// element i goes to lane i%8 as lane += float32(x[i]*v[i]), the tail is zero-padded, and the
// lanes are combined by ReduceLanes. The decoding itself is exact (a half or a bfloat16 is
// exactly a float32; a quantized value is one rounded float32 multiply, the same one
// DequantizeRow performs), so fusing it changes nothing. Q8_0 weight rows are not among
// them: they take a quantized input instead, as ggml's do (Q8Input and DotQ8_0Q8, in
// q8input.go).
//
// Like Dot, each has a portable Go implementation (rowdot_generic.go) that defines the
// result, and on amd64 CPUs with AVX2 and F16C an assembly implementation (rowdot_avx2_amd64.s)
// of the same arithmetic: VCVTPH2PS for halves (an exact conversion, subnormals and NaN
// payloads included), VPMOVZXWD and a 16-bit shift for bfloat16, VPMOVZXBD and VCVTDQ2PS
// for the quantized values, then VMULPS and VADDPS, never fused. NaN results follow
// Dot's rule: both paths return a NaN, the same one unless the inputs hold NaNs other than
// the default NaN 0xffc00000.
//
// The *Rows forms compute one output per weight row; on the fast path they run four rows
// at a time against the same x (four independent accumulators), which is what batch-1
// matrix–vector products need to approach memory bandwidth.

// Sizes of ggml's Q8_0 and Q4_0 blocks: 32 values, a little-endian fp16 scale d, then 32
// int8 values (Q8_0, value q·d, dotted with a quantized input by DotQ8_0Q8) or 16 bytes of
// nibbles (Q4_0, value (q−8)·d, element j in the low nibble of byte j and element 16+j in
// its high nibble).
const (
	QBlockLen      = 32 // values per Q8_0 or Q4_0 block
	Q8_0BlockBytes = 34 // bytes per Q8_0 block
	Q4_0BlockBytes = 18 // bytes per Q4_0 block
)

// DotF16 returns Dot(x, v) for the row v of len(x) IEEE 754 binary16 values stored
// little-endian in row[0:2·len(x)], bit for bit. Like Dot, it panics if cap(row) < 2·len(x).
func DotF16(x []float32, row []byte) float32 {
	return dotF16(x, row[:2*len(x)])
}

// DotBF16 returns Dot(x, v) for the row v of len(x) bfloat16 values stored little-endian in
// row[0:2·len(x)], bit for bit. Like Dot, it panics if cap(row) < 2·len(x).
func DotBF16(x []float32, row []byte) float32 {
	return dotBF16(x, row[:2*len(x)])
}

// DotF16Rows sets out[r] = DotF16(x, w[r·2n:(r+1)·2n]) for every r < len(out), n = len(x):
// w holds len(out) consecutive F16 rows. It panics if w is too short.
func DotF16Rows(out, x []float32, w []byte) {
	rb := 2 * len(x)
	dotF16Rows(out, x, w[:rowsBytes("DotF16Rows", len(out), rb)], rb)
}

// DotF16RowsStrided sets out[r] = DotF16(x, w[r·stride : r·stride+2·len(x)]) for every r <
// len(out): F16 rows that start stride bytes apart (attention's keys of one head in
// consecutive slots of an f16 cache), the same bits as one DotF16 per row. It panics if
// stride < 2·len(x) or w ends before the last row.
func DotF16RowsStrided(out, x []float32, w []byte, stride int) {
	span := stridedSpan("DotF16RowsStrided", "bytes", len(out), 2*len(x), stride, len(w))
	if len(out) == 0 {
		return
	}
	dotF16RowsStrided(out, x, w[:span], stride)
}

// DotBF16Rows sets out[r] = DotBF16(x, w[r·2n:(r+1)·2n]) for every r < len(out),
// n = len(x): w holds len(out) consecutive bfloat16 rows. It panics if w is too short.
func DotBF16Rows(out, x []float32, w []byte) {
	rb := 2 * len(x)
	dotBF16Rows(out, x, w[:rowsBytes("DotBF16Rows", len(out), rb)], rb)
}

// rowsBytes returns rows·rowBytes, panicking instead of overflowing.
func rowsBytes(what string, rows, rowBytes int) int {
	return formatRowsBytes(what, "", "", rows, rowBytes)
}

// stridedSpan checks rows rows of rowLen units (floats or bytes, named by unit) that
// start stride units apart against the have units given to the strided kernel what, and
// returns how many units they span: (rows-1)·stride + rowLen, 0 for no rows. It panics if
// stride < rowLen or the rows run past have.
func stridedSpan(what, unit string, rows, rowLen, stride, have int) int {
	if stride < rowLen {
		panic(fmt.Sprintf("kernels: %s: stride %d %s is shorter than a row of %d", what, stride, unit, rowLen))
	}
	if rows == 0 {
		return 0
	}
	if have < rowLen || rows-1 > (have-rowLen)/max(stride, 1) {
		panic(fmt.Sprintf("kernels: %s: %d %s hold fewer than %d rows of %d, %d apart", what, have, unit, rows, rowLen, stride))
	}
	return (rows-1)*stride + rowLen
}

// formatRowsBytes is rowsBytes for the kernel named "Dot"+format+op when format is set (else
// what alone), built only for the panic: the quantized row dots run on every product, and a
// name concatenated on each call was an allocation each time.
func formatRowsBytes(what, format, op string, rows, rowBytes int) int {
	if rowBytes > 0 && rows > int(^uint(0)>>1)/rowBytes {
		if format != "" {
			what = "Dot" + format + op
		}
		panic(fmt.Sprintf("kernels: %s: %d rows of %d bytes overflow", what, rows, rowBytes))
	}
	return rows * rowBytes
}
