package quant

import (
	"fmt"
	"strings"

	"github.com/kvref/kvref/internal/kernels"
)

// WeightType is a ggml block format for weight matrices, as GGUF files store them. A row
// of n weights (n a multiple of BlockSize) is cut into blocks of consecutive values, and
// every block is stored on its own, little-endian, byte for byte as ggml lays it out:
//
//	type  ggml id  values  bytes  layout of one block
//	q8_0   8        32      34    fp16 d · int8 q[32]                          x = q·d
//	q4_0   2        32      18    fp16 d · q[16]: element j in the low nibble
//	                              of byte j, element 16+j in its high nibble    x = (q−8)·d
//	q4_1   3        32      20    fp16 d · fp16 m · q[16] as q4_0               x = q·d + m
//	q5_0   6        32      22    fp16 d · qh[4] (fifth bits) · q[16]           x = (q−16)·d
//	q5_1   7        32      24    fp16 d · fp16 m · qh[4] · q[16]               x = q·d + m
//	q2_k  10       256      84    4-bit scale|min[16] · 2-bit q[64] · d · dmin  x = (d·sc)·q − dmin·m
//	q3_k  11       256     110    hmask[32] · 2-bit q[64] · 6-bit scales[12] · d
//	                                                                            x = (d·sc)·(q−4)
//	q4_k  12       256     144    fp16 d · fp16 dmin · 12 bytes of eight 6-bit
//	                              (scale, min) pairs · 128 bytes of nibbles     x = (d·sc)·q − dmin·m
//	q5_k  13       256     176    as q4_k, plus qh[32] (fifth bits)            x = (d·sc)·q − dmin·m
//	q6_k  14       256     210    ql[128] · qh[64] · int8 scales[16] · fp16 d   x = (d·sc)·(q−32)
//
// The k types are "super-blocks" of 256 values with a scale (and for q2_k, q4_k, q5_k a
// min) per sub-block of 16 or 32 values. The exact bit positions are documented beside
// each format (weight_q8_0.go, weight_q4_0.go, weight_q4_1.go, weight_q5_0.go,
// weight_q5_1.go, weight_q2_k.go, weight_q3_k.go, weight_q4_k.go, weight_q5_k.go,
// weight_q6_k.go).
//
// # Dequantization
//
// DequantizeRow computes every value with the float32 operations of ggml's
// dequantize_row_* (ggml/src/ggml-quants.c), in the same order and with every
// intermediate rounded to float32 (no fused multiply-add): the results are bit-identical
// to llama.cpp's.
//
// # Products
//
// DotRow and DotRows do what ggml's CPU backend does: the float32 input is first quantized
// (Input: ggml's quantize_row_q8_0 for q8_0, q4_0 and q5_0, quantize_row_q8_1 for q4_1 and
// q5_1, and quantize_row_q8_K for the k types), then dotted with the row in integers, one
// float multiply and add per block (the kernels of internal/kernels, whose portable Go
// defines the bits and whose AVX2 and AVX-512 VNNI assembly matches them). That adds the
// input's rounding (half a step of max|x|/127 per block of 32, or per super-block of 256
// for the k types) to the weights', and it is what lets a matrix–vector product run at
// memory bandwidth: widening every weight to float32 costs more arithmetic than two cores
// can do at the speed memory delivers the weights. DotRowsInput takes an input that is
// already quantized, so that a matrix product quantizes its input once.
//
// # Quantization
//
// QuantizeRow is ggml's reference quantizer for the type (quantize_row_q8_0_ref,
// quantize_row_q4_0_ref, quantize_row_q4_1_ref, quantize_row_q5_0_ref,
// quantize_row_q5_1_ref, quantize_row_q2_K_ref, quantize_row_q3_K_ref with make_q3_quants,
// quantize_row_q4_K_ref and quantize_row_q5_K_ref with make_qkx2_quants, and
// quantize_row_q6_K_ref with make_qx_quants), which is what llama-quantize uses when it is
// given no importance matrix. Every float32 operation is performed in ggml's order and
// rounded on its own, as an x86-64 build of ggml computes it (the quantizers live in
// ggml-base, which is compiled without FMA). A build of ggml whose C compiler contracts
// a·b+c into fused multiply-adds (gcc on aarch64, or with -march=native in CFLAGS)
// rounds differently and can choose other scales in a few k-quant super-blocks: 13 of 192
// for q4_k and 3 of 192 for q6_k on the test corpus; q8_0 and q4_0 are not affected.
// ggml's nearest_int rounds half to even, its roundf (q8_0) half away from zero, and
// q4_0, q4_1, q5_0 and q5_1 truncate x/d plus one half. Where C leaves a conversion
// undefined (float to int8 of an out-of-range or NaN value, which only happens for blocks
// whose scale is about 1e-37 or smaller, or not finite), kvref does what x86-64 does: the
// value is truncated to int32, with 0x80000000 for NaN and out-of-range values, and the
// low byte is kept. ggml's nearest_int is used with its release-build behaviour (its range
// assertion compiled out). The tests compare the bytes with ggml's C reference and with
// llama-quantize's output.
//
// # Error bounds
//
// For an input x and its round trip x̂ = Dequantize(Quantize(x)), per element:
//
//	q8_0  |x̂−x| <= d/2 + 127·e16(d) + 2^-20·m + 2^-140,        d = m/127
//	q4_0  |x̂−x| <= |d|·(1/2 + max(0, t−7.5)) + 8·e16(|d|) + 2^-20·m + 2^-140,
//	             d = m/8, t = −8·x/xmax <= 8; the excess max(0, t−7.5) is nonzero only for
//	             values of the opposite sign to the block's extreme value xmax with
//	             |x| > 15m/16, which clamp to q = 15 and are off by up to one step d
//	q4_k  |x̂−x| <= s/2 + dist(x, [−dmin·m, 15·s − dmin·m]) + 2^-20·(|x| + 16·s + dmin·m),
//	             s = d·sc, for each sub-block's stored d, dmin, sc, m
//	q6_k  |x̂−x| <= |s|/2 + dist(x, s·[−32, 31]) + 2^-20·(|x| + 33·|s|),   s = d·sc
//
// where m is the block's largest |x| and e16(v) = max(2^-11·v, 2^-25) bounds the fp16
// rounding of the scale (at most 127, respectively 8, steps of it), while the fp16 scale
// is finite (m < 65520·127 for q8_0, m < 65520·8 for q4_0); 2^-20·m covers the float32
// roundings and 2^-140 subnormal scales. For the k-quants the bound says that every value
// is the nearest point of its sub-block's grid (ggml's last pass requantizes each value
// with the stored 6- or 8-bit scales); how far the grid reaches depends on ggml's scale
// search, so the tests also hold the root-mean-square error on rows of normally
// distributed values to at most 0.085·rms(x) for q4_k and 0.025·rms(x) for q6_k
// (measured: 0.072 and 0.018, 0.021 when q6_k's fp16 d is subnormal; q4_0 gives about
// 0.086 and q8_0 0.0054, held to 0.1 and 0.007). The other types' values are held to
// their grids the same way (q4_1, q5_1: d/2 within [min, max]; q5_0 as q4_0 with 16
// steps; q2_k, q3_k, q5_k as the other k types), and their root-mean-square errors on
// the same rows to q4_1 0.09 (measured 0.078), q5_0 0.05 (0.043), q5_1 0.045 (0.038),
// q2_k 0.33 (0.30), q3_k 0.17 (0.15) and q5_k 0.042 (0.036).
type WeightType uint8

// The weight types, in the order WeightTypes lists them.
const (
	WeightQ8_0 WeightType = iota // ggml Q8_0: 32 int8 values and an fp16 scale
	WeightQ4_0                   // ggml Q4_0: 32 4-bit values and an fp16 scale
	WeightQ4_K                   // ggml Q4_K: 256 4-bit values, 6-bit scales and mins, fp16 super-scales
	WeightQ6_K                   // ggml Q6_K: 256 6-bit values, int8 scales, an fp16 super-scale
	WeightQ4_1                   // ggml Q4_1: 32 4-bit values, an fp16 scale and an fp16 min
	WeightQ5_0                   // ggml Q5_0: 32 5-bit values and an fp16 scale
	WeightQ5_1                   // ggml Q5_1: 32 5-bit values, an fp16 scale and an fp16 min
	WeightQ2_K                   // ggml Q2_K: 256 2-bit values, 4-bit scales and mins, fp16 super-scales
	WeightQ3_K                   // ggml Q3_K: 256 3-bit values, 6-bit scales, an fp16 super-scale
	WeightQ5_K                   // ggml Q5_K: 256 5-bit values, 6-bit scales and mins, fp16 super-scales
	numWeightTypes
)

// weightFormat describes one weight type: its names, its sizes and its kernels, which work
// on whole blocks (the callers check the lengths). The products take a quantized input:
// dotQ8 (an Input's Q8_0/Q8_1 form) or dotQ8K (its Q8_K form), one output per row.
type weightFormat struct {
	name       string
	ggmlType   uint32
	blockSize  int
	blockBytes int
	dequantize func(dst []float32, src []byte)
	quantize   func(dst []byte, src []float32)
	dotQ8      func(out []float32, x *kernels.Q8Input, rows []byte)
	dotQ8K     func(out []float32, x *kernels.Q8KInput, rows []byte)
	halves     []int // offsets of the block's fp16 fields
	dotBatch   func(out []float32, stride int, b *BatchInput, rows []byte, n int)
}

// weightFormats holds every weight type, in the order of the constants: adding a weight
// type is one row here and its codec and kernels.
var weightFormats = [numWeightTypes]weightFormat{
	WeightQ8_0: {name: "q8_0", ggmlType: 8, blockSize: q8WeightBlockLen, blockBytes: q8WeightBlockBytes,
		dequantize: dequantizeQ8_0Weights, quantize: quantizeQ8_0Weights, dotQ8: kernels.DotQ8_0Q8Rows,
		halves: []int{0}, dotBatch: onQ8(kernels.DotQ8_0Batch)},
	WeightQ4_0: {name: "q4_0", ggmlType: 2, blockSize: q4BlockLen, blockBytes: q4BlockBytes,
		dequantize: dequantizeQ4_0, quantize: quantizeQ4_0, dotQ8: kernels.DotQ4_0Q8Rows,
		halves: []int{0}, dotBatch: onQ8(kernels.DotQ4_0Batch)},
	WeightQ4_K: {name: "q4_k", ggmlType: 12, blockSize: qkK, blockBytes: q4KBlockBytes,
		dequantize: dequantizeQ4_K, quantize: quantizeQ4_K, dotQ8K: kernels.DotQ4_KRows,
		halves: []int{0, 2}, dotBatch: onQ8K(kernels.DotQ4_KBatch)},
	WeightQ6_K: {name: "q6_k", ggmlType: 14, blockSize: qkK, blockBytes: q6KBlockBytes,
		dequantize: dequantizeQ6_K, quantize: quantizeQ6_K, dotQ8K: kernels.DotQ6_KRows,
		halves: []int{q6KDOffset}, dotBatch: onQ8K(kernels.DotQ6_KBatch)},
	WeightQ4_1: {name: "q4_1", ggmlType: 3, blockSize: q4BlockLen, blockBytes: q4_1BlockBytes,
		dequantize: dequantizeQ4_1, quantize: encodeQ4_1, dotQ8: kernels.DotQ4_1Q8Rows,
		halves: []int{0, 2}},
	WeightQ5_0: {name: "q5_0", ggmlType: 6, blockSize: q4BlockLen, blockBytes: q5_0BlockBytes,
		dequantize: dequantizeQ5_0, quantize: encodeQ5_0, dotQ8: kernels.DotQ5_0Q8Rows, halves: []int{0},
		dotBatch: onQ8(kernels.DotQ5_0Batch)},
	WeightQ5_1: {name: "q5_1", ggmlType: 7, blockSize: q4BlockLen, blockBytes: q5_1BlockBytes,
		dequantize: dequantizeQ5_1, quantize: encodeQ5_1, dotQ8: kernels.DotQ5_1Q8Rows,
		halves: []int{0, 2}},
	WeightQ2_K: {name: "q2_k", ggmlType: 10, blockSize: qkK, blockBytes: q2KBlockBytes,
		dequantize: dequantizeQ2_K, quantize: quantizeQ2_K, dotQ8K: kernels.DotQ2_KRows,
		halves: []int{q2KDOffset, q2KDOffset + 2}, dotBatch: onQ8K(kernels.DotQ2_KBatch)},
	WeightQ3_K: {name: "q3_k", ggmlType: 11, blockSize: qkK, blockBytes: q3KBlockBytes,
		dequantize: dequantizeQ3_K, quantize: quantizeQ3_K, dotQ8K: kernels.DotQ3_KRows,
		halves: []int{q3KDOffset}, dotBatch: onQ8K(kernels.DotQ3_KBatch)},
	WeightQ5_K: {name: "q5_k", ggmlType: 13, blockSize: qkK, blockBytes: q5KBlockBytes,
		dequantize: dequantizeQ5_K, quantize: quantizeQ5_K, dotQ8K: kernels.DotQ5_KRows,
		halves: []int{0, 2}, dotBatch: onQ8K(kernels.DotQ5_KBatch)},
}

// WeightTypes returns every weight type, in declaration order.
func WeightTypes() []WeightType {
	ts := make([]WeightType, numWeightTypes)
	for i := range ts {
		ts[i] = WeightType(i)
	}
	return ts
}

// weightTypeNames lists the canonical names, for error messages.
func weightTypeNames() string {
	names := make([]string, numWeightTypes)
	for i, f := range weightFormats {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// String returns the canonical name of t ("q8_0", "q4_k", ...), or "WeightType(N)" for a
// value that is not a weight type.
func (t WeightType) String() string {
	if t < numWeightTypes {
		return weightFormats[t].name
	}
	return fmt.Sprintf("WeightType(%d)", uint8(t))
}

// ParseWeightType returns the weight type named s ("q8_0", "q4_0", "q4_1", "q5_0", "q5_1",
// "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"). Case and surrounding spaces are ignored, so
// ggml's spellings ("Q4_K", "q6_K") are accepted too. The error lists the valid names.
func ParseWeightType(s string) (WeightType, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for t, f := range weightFormats {
		if name == f.name {
			return WeightType(t), nil
		}
	}
	return 0, fmt.Errorf("quant: unknown weight type %q; valid types are %s", s, weightTypeNames())
}

// WeightTypeForGGML returns the weight type whose ggml/GGUF tensor type id is id (8 for
// Q8_0, 12 for Q4_K, ...; see WeightType), and false for every other id.
func WeightTypeForGGML(id uint32) (WeightType, bool) {
	for t, f := range weightFormats {
		if f.ggmlType == id {
			return WeightType(t), true
		}
	}
	return 0, false
}

// format returns t's description, panicking with a clear message for a value that is
// not a weight type.
func (t WeightType) format() *weightFormat {
	if t >= numWeightTypes {
		panic(fmt.Sprintf("quant: %v is not a weight type; valid types are %s", t, weightTypeNames()))
	}
	return &weightFormats[t]
}

// GGMLType returns t's ggml/GGUF tensor type id (see WeightType).
func (t WeightType) GGMLType() uint32 { return t.format().ggmlType }

// BlockSize returns the number of values in one block: 32 for q8_0, q4_0, q4_1, q5_0 and
// q5_1, 256 for the k types. Rows must be a multiple of it long.
func (t WeightType) BlockSize() int { return t.format().blockSize }

// BlockBytes returns the size of one stored block (34 bytes for q8_0, 144 for q4_k, ...;
// see WeightType).
func (t WeightType) BlockBytes() int { return t.format().blockBytes }

// HalfOffsets returns the byte offsets, within a block, of its fp16 fields (the scales and
// the mins); the other bytes are codes and small integer scales, any value of which is
// valid.
func (t WeightType) HalfOffsets() []int { return append([]int(nil), t.format().halves...) }

// RowBytes returns the bytes a row of n values takes: n/BlockSize blocks of BlockBytes.
// It fails when t is not a weight type or n is negative or not a multiple of BlockSize.
func (t WeightType) RowBytes(n int) (int, error) {
	if t >= numWeightTypes {
		return 0, fmt.Errorf("quant: %v is not a weight type; valid types are %s", t, weightTypeNames())
	}
	f := &weightFormats[t]
	if n < 0 || n%f.blockSize != 0 {
		return 0, fmt.Errorf("quant: a %s row stores whole blocks of %d values, so its length must be a multiple of %d; got %d",
			f.name, f.blockSize, f.blockSize, n)
	}
	return n / f.blockSize * f.blockBytes, nil
}

// checkRow panics unless n values fit t's blocks exactly and b bytes hold their
// encoding; it returns the number of bytes that are used.
func (t WeightType) checkRow(what string, n, b int) int {
	need, err := t.RowBytes(n)
	if err != nil {
		panic(fmt.Sprintf("quant: %s: %v", what, err))
	}
	if b < need {
		panic(fmt.Sprintf("quant: %s: %d %s values need %d bytes, got %d", what, n, t, need, b))
	}
	return need
}

// DequantizeRow decodes the row stored in src into dst, which sets the row's length:
// len(dst) must be a multiple of BlockSize, and src must hold at least
// RowBytes(len(dst)) bytes (only those are read). Values are computed exactly as ggml's
// dequantize_row_* computes them. It panics on wrong lengths or an invalid type.
func (t WeightType) DequantizeRow(dst []float32, src []byte) {
	need := t.checkRow("DequantizeRow", len(dst), len(src))
	t.format().dequantize(dst, src[:need])
}

// QuantizeRow encodes src with ggml's reference quantizer for t and writes the blocks to
// dst: len(src) must be a multiple of BlockSize, and dst must have room for
// RowBytes(len(src)) bytes (only those are written). It panics on wrong lengths or an
// invalid type.
func (t WeightType) QuantizeRow(dst []byte, src []float32) {
	need := t.checkRow("QuantizeRow", len(src), len(dst))
	t.format().quantize(dst[:need], src)
}

// DotRow returns the product of x with the stored row, whose length is len(x) (a multiple
// of BlockSize), as ggml computes it: x quantized (see Input), then dotted in integers
// (see WeightType); row must hold at least RowBytes(len(x)) bytes. It panics on wrong
// lengths or an invalid type.
func (t WeightType) DotRow(x []float32, row []byte) float32 {
	var out [1]float32
	t.DotRows(out[:], x, row)
	return out[0]
}

// DotRows sets out[r] = DotRow(x, rows[r·rb:(r+1)·rb]) for every r < len(out), where
// rb = RowBytes(len(x)): rows holds len(out) consecutive stored rows (at least
// len(out)·rb bytes; only those are read), and x is quantized once. It panics on wrong
// lengths or an invalid type.
func (t WeightType) DotRows(out, x []float32, rows []byte) {
	if _, err := t.RowBytes(len(x)); err != nil {
		panic(fmt.Sprintf("quant: DotRows: %v", err))
	}
	var in Input
	in.Quantize(x, t.Input())
	t.DotRowsInput(out, &in, rows)
}

// DotRowsInput is DotRows with an input that is already quantized: in must have been
// quantized with (at least) t.Input(). The results are DotRows', bit for bit. It panics on
// wrong lengths, an invalid type, or an input lacking t's form.
func (t WeightType) DotRowsInput(out []float32, in *Input, rows []byte) {
	rb, err := t.RowBytes(in.n)
	if err != nil {
		panic(fmt.Sprintf("quant: DotRowsInput: %v", err))
	}
	if rb > 0 && len(out) > len(rows)/rb {
		panic(fmt.Sprintf("quant: DotRows: %d %s rows of %d values need %d bytes, got %d", len(out), t, in.n, len(out)*rb, len(rows)))
	}
	f := t.format()
	if !in.has(t.Input()) {
		panic(fmt.Sprintf("quant: DotRowsInput: the input was not quantized for %s (it needs %v)", t, t.Input()))
	}
	rows = rows[:len(out)*rb]
	if f.dotQ8K != nil {
		f.dotQ8K(out, &in.q8k, rows)
		return
	}
	f.dotQ8(out, &in.q8, rows)
}
