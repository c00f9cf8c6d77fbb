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
//	q4_k  12       256     144    fp16 d · fp16 dmin · 12 bytes of eight 6-bit
//	                              (scale, min) pairs · 128 bytes of nibbles     x = (d·sc)·q − dmin·m
//	q6_k  14       256     210    ql[128] · qh[64] · int8 scales[16] · fp16 d   x = (d·sc)·(q−32)
//
// q4_k and q6_k are "super-blocks": q4_k has eight sub-blocks of 32 values, each with a
// 6-bit scale sc and a 6-bit min m; q6_k has sixteen sub-blocks of 16 values, each with
// an int8 scale. The exact bit positions are documented beside each format (weight_q4_0.go,
// weight_q8_0.go, weight_q4_k.go, weight_q6_k.go).
//
// # Dequantization
//
// DequantizeRow computes every value with the float32 operations of ggml's
// dequantize_row_* (ggml/src/ggml-quants.c), in the same order and with every
// intermediate rounded to float32 (no fused multiply-add): the results are bit-identical
// to llama.cpp's. DotRow is the fused form used by matrix products. For q4_0, q4_k and
// q6_k it returns exactly kernels.Dot(x, DequantizeRow(row)), bit for bit, without the
// float32 copy. For q8_0 it does what ggml does: x is first quantized to Q8_0 itself
// (kernels.Q8Input, ggml's quantize_row_q8_0) and the two are dotted in integers, one float
// multiply per block (kernels.DotQ8_0Q8). That adds the input's rounding (half a step of
// max|x|/127 per block of 32) to the weights', and it is what lets a q8_0 matrix–vector
// product run at memory bandwidth: widening every weight to float32 costs about twice the
// arithmetic, more than two cores can do at the speed memory delivers the weights.
//
// # Quantization
//
// QuantizeRow is ggml's reference quantizer for the type (quantize_row_q8_0_ref,
// quantize_row_q4_0_ref, quantize_row_q4_K_ref with make_qkx2_quants, and
// quantize_row_q6_K_ref with make_qx_quants), which is what llama-quantize uses when it is
// given no importance matrix. Every float32 operation is performed in ggml's order and
// rounded on its own, as an x86-64 build of ggml computes it (the quantizers live in
// ggml-base, which is compiled without FMA). A build of ggml whose C compiler contracts
// a·b+c into fused multiply-adds (gcc on aarch64, or with -march=native in CFLAGS)
// rounds differently and can choose other scales in a few k-quant super-blocks: 13 of 192
// for q4_k and 3 of 192 for q6_k on the test corpus; q8_0 and q4_0 are not affected.
// ggml's nearest_int rounds half to even, its roundf (q8_0) half away from zero, and
// q4_0 truncates x/d + 8.5. Where C leaves a conversion undefined
// (float to int8 of an out-of-range or NaN value, which only happens for blocks whose
// scale is about 1e-37 or smaller, or not finite), kvref does what x86-64 does: the value
// is truncated to int32, with 0x80000000 for NaN and out-of-range values, and the low
// byte is kept. ggml's nearest_int is used with its release-build behaviour (its range
// assertion compiled out). The tests compare the bytes with ggml's C reference.
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
// 0.086 and q8_0 0.0054, held to 0.1 and 0.007).
type WeightType uint8

// The weight types, in the order WeightTypes lists them.
const (
	WeightQ8_0 WeightType = iota // ggml Q8_0: 32 int8 values and an fp16 scale
	WeightQ4_0                   // ggml Q4_0: 32 4-bit values and an fp16 scale
	WeightQ4_K                   // ggml Q4_K: 256 4-bit values, 6-bit scales and mins, fp16 super-scales
	WeightQ6_K                   // ggml Q6_K: 256 6-bit values, int8 scales, an fp16 super-scale
	numWeightTypes
)

// weightFormat describes one weight type: its names, its sizes and its kernels, which work
// on whole blocks (the callers check the lengths). dot is the fused row dot: for q8_0 the
// quantized-input product of internal/kernels (DotQ8_0Q8), for q4_0 the SIMD kernel
// DotQ4_0 (whose portable twin is dotQ4_0 here, which the tests hold it to), for the
// k-quants the Go loops of this package. dotRows, when not nil, is the same dot for
// consecutive rows, run several rows at a time.
type weightFormat struct {
	name       string
	ggmlType   uint32
	blockSize  int
	blockBytes int
	dequantize func(dst []float32, src []byte)
	quantize   func(dst []byte, src []float32)
	dot        func(x []float32, row []byte) float32
	dotRows    func(out, x []float32, rows []byte)
}

var weightFormats = [numWeightTypes]weightFormat{
	WeightQ8_0: {"q8_0", 8, q8WeightBlockLen, q8WeightBlockBytes, dequantizeQ8_0Weights, quantizeQ8_0Weights, dotQ8_0Weights, dotQ8_0WeightsRows},
	WeightQ4_0: {"q4_0", 2, q4BlockLen, q4BlockBytes, dequantizeQ4_0, quantizeQ4_0, kernels.DotQ4_0, kernels.DotQ4_0Rows},
	WeightQ4_K: {"q4_k", 12, qkK, q4KBlockBytes, dequantizeQ4_K, quantizeQ4_K, dotQ4_K, nil},
	WeightQ6_K: {"q6_k", 14, qkK, q6KBlockBytes, dequantizeQ6_K, quantizeQ6_K, dotQ6_K, nil},
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

// String returns the canonical name of t ("q8_0", "q4_0", "q4_k", "q6_k"), or
// "WeightType(N)" for a value that is not a weight type.
func (t WeightType) String() string {
	if t < numWeightTypes {
		return weightFormats[t].name
	}
	return fmt.Sprintf("WeightType(%d)", uint8(t))
}

// ParseWeightType returns the weight type named s: "q8_0", "q4_0", "q4_k" or "q6_k".
// Case and surrounding spaces are ignored, so ggml's spellings ("Q4_K", "q6_K") are
// accepted too. The error lists the valid names.
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
// Q8_0, 2 for Q4_0, 12 for Q4_K, 14 for Q6_K), and false for every other id.
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

// GGMLType returns t's ggml/GGUF tensor type id (8, 2, 12 or 14).
func (t WeightType) GGMLType() uint32 { return t.format().ggmlType }

// BlockSize returns the number of values in one block: 32 for q8_0 and q4_0, 256 for q4_k
// and q6_k. Rows must be a multiple of it long.
func (t WeightType) BlockSize() int { return t.format().blockSize }

// BlockBytes returns the size of one stored block: 34 (q8_0), 18 (q4_0), 144 (q4_k) or
// 210 (q6_k) bytes.
func (t WeightType) BlockBytes() int { return t.format().blockBytes }

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

// DotRow returns the dot product of x with the stored row, whose length is len(x) (a
// multiple of BlockSize); row must hold at least RowBytes(len(x)) bytes. For q4_0, q4_k and
// q6_k the result is bit-identical to kernels.Dot(x, v) where v is the row decoded by
// DequantizeRow: each value is dequantized with the same float32 operations, the products
// x[i]·v[i] are rounded and added into lane i%8, and the lanes are combined by
// kernels.ReduceLanes. (len(x) is a multiple of 8, so kernels.Dot's zero-padded tail is
// empty.) For q8_0 it is kernels.DotQ8_0Q8 of x quantized to Q8_0, ggml's product (see
// WeightType). It panics on wrong lengths or an invalid type.
func (t WeightType) DotRow(x []float32, row []byte) float32 {
	need := t.checkRow("DotRow", len(x), len(row))
	return t.format().dot(x, row[:need])
}

// DotRows sets out[r] = DotRow(x, rows[r·rb:(r+1)·rb]) for every r < len(out), where
// rb = RowBytes(len(x)): rows holds len(out) consecutive stored rows (at least
// len(out)·rb bytes; only those are read). The results are DotRow's, bit for bit; q8_0
// and q4_0 rows are dotted several at a time (kernels.DotQ8_0Q8Rows, with x quantized
// once, and kernels.DotQ4_0Rows), which is how a matrix–vector product reaches memory
// bandwidth. It panics on wrong
// lengths or an invalid type.
func (t WeightType) DotRows(out, x []float32, rows []byte) {
	rb, err := t.RowBytes(len(x))
	if err != nil {
		panic(fmt.Sprintf("quant: DotRows: %v", err))
	}
	if rb > 0 && len(out) > len(rows)/rb {
		panic(fmt.Sprintf("quant: DotRows: %d %s rows of %d values need %d bytes, got %d", len(out), t, len(x), len(out)*rb, len(rows)))
	}
	f := t.format()
	if f.dotRows != nil {
		f.dotRows(out, x, rows[:len(out)*rb])
		return
	}
	for r := range out {
		out[r] = f.dot(x, rows[r*rb:(r+1)*rb])
	}
}
