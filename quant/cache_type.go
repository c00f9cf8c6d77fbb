package quant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvref/kvref/internal/kernels"
)

// CacheType is the element format of a K/V cache row. See the package documentation for
// each format's layout, rounding and error bound.
type CacheType uint8

// The cache types, in the order CacheTypes lists them.
const (
	F32     CacheType = iota // float32, exact
	F16                      // IEEE half, round to nearest even
	BF16                     // bfloat16, round to nearest even
	Int8                     // symmetric int8 with a float32 scale per token per KV head
	FP8E4M3                  // OCP E4M3 with a float32 scale per token per KV head
	FP8E5M2                  // OCP E5M2, no scale, saturating
	Q8_0                     // llama.cpp block_q8_0: 32 int8 values and an fp16 scale per block
	Q4_0                     // llama.cpp block_q4_0: 32 4-bit codes and an fp16 scale per block
	Q4_1                     // llama.cpp block_q4_1: 32 4-bit codes, an fp16 scale and an fp16 minimum per block
	IQ4_NL                   // llama.cpp block_iq4_nl: 32 4-bit indices into a fixed non-linear grid, an fp16 scale per block
	Q5_0                     // llama.cpp block_q5_0: 32 5-bit codes and an fp16 scale per block
	Q5_1                     // llama.cpp block_q5_1: 32 5-bit codes, an fp16 scale and an fp16 minimum per block
	numCacheTypes
)

// cacheFormat is one cache type: its names, how a row of it is laid out, and its codec.
// Every method of CacheType reads it from cacheFormats, so adding a cache type is one row
// there and a codec file (and its oracle decoder in engine/oracle/formats.go).
//
// A row is laid out in one of two ways. Per head (valueBytes > 0): each KV head is
// headScale bytes of scale, then headDim values of valueBytes each. In blocks (blockBytes
// > 0): the row is cut into blocks of blockLen values that run across heads, blockBytes
// each.
type cacheFormat struct {
	name    string   // the canonical name (String, ParseCacheType)
	aliases []string // other names ParseCacheType takes

	valueBytes int // per-head layout: bytes per value
	headScale  int // per-head layout: bytes of scale before each head's values
	blockBytes int // block layout: bytes per block of blockLen values

	// encode quantizes a whole row (the callers check the lengths).
	encode func(dst []byte, src []float32, headDim int)
	// decodeHead decodes one head from the head's bytes (per-head layout).
	decodeHead func(dst []float32, head []byte)
	// decodeRange decodes len(dst) values of a row starting at element e0 (block layout).
	decodeRange func(dst []float32, row []byte, e0 int)
	// decodeRow, when set, decodes a whole row of the per-head layout in one call (the
	// unscaled types, whose rows are their heads one after another); otherwise Decode
	// decodes head by head.
	decodeRow func(dst []float32, row []byte)

	// The fused reads, all optional: without one, a head is decoded (decodeHead or
	// decodeRange) and handed to kernels.Dot or kernels.Axpy. Each gives the same bits.
	// dotHead and axpyHead get the head's bytes (per-head layout); dotHeads and axpyHeads
	// do DotHeads and AxpyHeads in one strided kernel and report false when they cannot
	// (the rows then go one by one).
	dotHead   func(q []float32, head []byte) float32
	axpyHead  func(dst []float32, a float32, head []byte)
	dotHeads  func(scores, q []float32, rows []byte, head, kvHeads, headDim, rowBytes int) bool
	axpyHeads func(dst, a []float32, rows []byte, head, kvHeads, headDim int) bool
	// dotHeadRange and axpyHeadRange do DotHeadRange and AxpyHeadRange (a run of heads)
	// in one kernel call and report false when they cannot (the heads then go one by one).
	dotHeadRange  func(scores []float32, scoreStride int, q []float32, qStride int, rows []byte, n, h0, h1, kvHeads, headDim, rowBytes int, next []byte) bool
	axpyHeadRange func(dst []float32, dstStride int, a []float32, aStride int, rows []byte, n, h0, h1, kvHeads, headDim, rowBytes int, next []byte) bool
	// prefetchesNext: the reads attention makes of a block (dotHeadRange and
	// axpyHeadRange where set, decodeHeads otherwise) ask the memory for their next rows.
	prefetchesNext bool
	// decodeHeads, when set, is DecodeHeads in one strided kernel; it reports false when it
	// cannot (the rows are then decoded one by one).
	decodeHeads func(dst []float32, rows []byte, head, kvHeads, headDim, rowBytes int, next []byte) bool
}

// cacheFormats holds every cache type, in the order of the constants. The codecs are in
// cache_f32.go, cache_half.go, cache_e5m2.go, cache_scaled.go (int8, fp8-e4m3),
// cache_q8_0.go, weight_q4_0.go, cache_q4_1.go, cache_iq4_nl.go, cache_q5.go and
// cache_block.go (the 4- and 5-bit blocks' decoding); the fused reads in cache_head.go.
var cacheFormats = [numCacheTypes]cacheFormat{
	F32: {name: "f32", aliases: []string{"fp32"}, valueBytes: 4,
		encode: rowCodec(encodeF32), decodeHead: decodeF32, decodeRow: decodeF32,
		dotHead: dotF32Head, axpyHead: axpyF32Head, dotHeads: dotF32Heads, axpyHeads: axpyF32Heads,
		dotHeadRange: dotF32HeadRange, axpyHeadRange: axpyF32HeadRange, decodeHeads: decodeF32Heads},
	F16: {name: "f16", aliases: []string{"fp16"}, valueBytes: 2,
		encode: rowCodec(encodeF16), decodeHead: decodeF16, decodeRow: decodeF16,
		dotHead: kernels.DotF16, dotHeads: dotF16Heads, axpyHeads: axpyF16Heads,
		dotHeadRange: dotF16HeadRange, axpyHeadRange: axpyF16HeadRange, prefetchesNext: true, decodeHeads: decodeF16Heads},
	BF16: {name: "bf16", valueBytes: 2,
		encode: rowCodec(encodeBF16), decodeHead: decodeBF16, decodeRow: decodeBF16, dotHead: kernels.DotBF16},
	Int8: {name: "int8", valueBytes: 1, headScale: scaleBytes,
		encode: int8Codec.encode, decodeHead: int8Codec.decodeHead, dotHead: int8Codec.dot},
	FP8E4M3: {name: "fp8-e4m3", aliases: []string{"fp8"}, valueBytes: 1, headScale: scaleBytes,
		encode: e4m3Codec.encode, decodeHead: e4m3Codec.decodeHead, dotHead: e4m3Codec.dot},
	FP8E5M2: {name: "fp8-e5m2", valueBytes: 1,
		encode: rowCodec(encodeE5M2), decodeHead: decodeE5M2, decodeRow: decodeE5M2, dotHead: dotE5M2},
	Q8_0: {name: "q8_0", blockBytes: q8BlockBytes,
		encode: rowCodec(encodeQ8_0), decodeRange: decodeQ8Range, dotHeads: dotQ8_0Heads, axpyHeads: axpyQ8_0Heads,
		dotHeadRange: dotQ8_0HeadRange, axpyHeadRange: axpyQ8_0HeadRange, prefetchesNext: true, decodeHeads: decodeQ8_0Heads},
	Q4_0: {name: "q4_0", blockBytes: q4BlockBytes,
		encode: rowCodec(quantizeQ4_0), decodeRange: blockDecoder(groupQ4_0, q4BlockBytes)},
	Q4_1: {name: "q4_1", blockBytes: q4_1BlockBytes,
		encode: rowCodec(encodeQ4_1), decodeRange: blockDecoder(groupQ4_1, q4_1BlockBytes)},
	IQ4_NL: {name: "iq4_nl", blockBytes: iq4nlBlockBytes,
		encode: rowCodec(encodeIQ4NLCache), decodeRange: blockDecoder(groupIQ4NL, iq4nlBlockBytes)},
	Q5_0: {name: "q5_0", blockBytes: q5_0BlockBytes,
		encode: rowCodec(encodeQ5_0), decodeRange: blockDecoder(groupQ5_0, q5_0BlockBytes)},
	Q5_1: {name: "q5_1", blockBytes: q5_1BlockBytes,
		encode: rowCodec(encodeQ5_1), decodeRange: blockDecoder(groupQ5_1, q5_1BlockBytes)},
}

// rowCodec adapts an encoder of whole rows that needs no head size.
func rowCodec(encode func(dst []byte, src []float32)) func(dst []byte, src []float32, headDim int) {
	return func(dst []byte, src []float32, _ int) { encode(dst, src) }
}

// format returns t's row of cacheFormats; t must be a cache type.
func (t CacheType) format() *cacheFormat { return &cacheFormats[t] }

// headBytes is the bytes of one head in the per-head layout.
func (f *cacheFormat) headBytes(headDim int) int { return f.headScale + f.valueBytes*headDim }

// blockLen is the number of values in one block of every block type (ggml's QK8_0, QK4_0,
// QK4_1, QK4_NL, QK5_0 and QK5_1 are all 32).
const blockLen = 32

// blocked reports whether t stores rows in blocks of blockLen values that run across
// heads (q8_0 and ggml's 4- and 5-bit formats).
func (t CacheType) blocked() bool { return t < numCacheTypes && cacheFormats[t].blockBytes != 0 }

// Block returns the values and bytes of one block for the block types (32 values in 34
// bytes for q8_0, 18 for q4_0 and iq4_nl, 20 for q4_1, 22 for q5_0, 24 for q5_1), whose
// rows must hold whole blocks, and 0, 0 for the types that store each value or each head
// on its own.
func (t CacheType) Block() (values, bytes int) {
	if !t.blocked() {
		return 0, 0
	}
	return blockLen, cacheFormats[t].blockBytes
}

// ValueBytes returns, for the types that store a row head by head, the bytes of one
// value and of the scale in front of each head (f32: 4, 0; f16 and bf16: 2, 0; fp8-e5m2:
// 1, 0; int8 and fp8-e4m3: 1, 4), and 0, 0 for the block types (see Block).
func (t CacheType) ValueBytes() (value, headScale int) {
	if t >= numCacheTypes {
		return 0, 0
	}
	return cacheFormats[t].valueBytes, cacheFormats[t].headScale
}

// ParseCacheTypes resolves a cache type for keys and values together and optional ones for
// each (llama.cpp's --cache-type-k and --cache-type-v): k and v, when not empty, override
// both.
func ParseCacheTypes(both, k, v string) (CacheType, CacheType, error) {
	if strings.TrimSpace(k) == "" {
		k = both
	}
	if strings.TrimSpace(v) == "" {
		v = both
	}
	kt, err := ParseCacheType(k)
	if err != nil {
		return 0, 0, err
	}
	vt, err := ParseCacheType(v)
	return kt, vt, err
}

// String returns the canonical name of t ("f32", "f16", "bf16", "int8", "fp8-e4m3",
// "fp8-e5m2", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"; the q and iq names are
// llama.cpp's --cache-type-k spellings), or "CacheType(N)" for a value that is not a
// cache type.
func (t CacheType) String() string {
	if t < numCacheTypes {
		return cacheFormats[t].name
	}
	return fmt.Sprintf("CacheType(%d)", uint8(t))
}

// CacheTypes returns every cache type, in declaration order (F32 first, Q5_1 last).
func CacheTypes() []CacheType {
	ts := make([]CacheType, numCacheTypes)
	for i := range ts {
		ts[i] = CacheType(i)
	}
	return ts
}

// ParseCacheType returns the cache type named s: one of the canonical names (see String;
// llama.cpp's -ctk/-ctv names f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0 and q5_1 are
// among them), or an alias "fp32", "fp16", "fp8" (= "fp8-e4m3"). Case and surrounding
// spaces are ignored. The error lists the valid names.
func ParseCacheType(s string) (CacheType, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for t, f := range cacheFormats {
		if name == f.name || slices.Contains(f.aliases, name) {
			return CacheType(t), nil
		}
	}
	var aliases []string
	for _, f := range cacheFormats {
		for _, a := range f.aliases {
			aliases = append(aliases, a+" = "+f.name)
		}
	}
	return 0, fmt.Errorf("quant: unknown cache type %q; valid types are %s (aliases: %s)",
		s, cacheTypeNames(), strings.Join(aliases, ", "))
}

// cacheTypeNames lists the canonical names, for error messages.
func cacheTypeNames() string {
	names := make([]string, numCacheTypes)
	for i, f := range cacheFormats {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// Validate reports whether rows of kvHeads heads of headDim values can be stored as t:
// both must be positive, and the block types (q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1),
// whose blocks of 32 values run across the whole row, need kvHeads*headDim to be a
// multiple of 32.
func (t CacheType) Validate(kvHeads, headDim int) error {
	if t >= numCacheTypes {
		return fmt.Errorf("quant: %v is not a cache type; valid types are %s", t, cacheTypeNames())
	}
	if kvHeads < 1 || headDim < 1 {
		return fmt.Errorf("quant: %v cache needs kvHeads >= 1 and headDim >= 1, got kvHeads=%d headDim=%d", t, kvHeads, headDim)
	}
	if t.blocked() && kvHeads*headDim%blockLen != 0 {
		return fmt.Errorf("quant: %v cache stores each K/V row in blocks of %d values, so kvHeads*headDim must be a multiple of %d; got %d*%d = %d (pick another cache type, e.g. int8, which scales per head)",
			t, blockLen, blockLen, kvHeads, headDim, kvHeads*headDim)
	}
	return nil
}

// RowBytes returns the bytes one token's K (or V) row takes in one layer, scales
// included: 4·n for f32, 2·n for f16 and bf16, n for fp8-e5m2, kvHeads·(4+headDim) for
// int8 and fp8-e4m3, and (n/32)·B for the block types, where n = kvHeads·headDim and B is
// the bytes of one block of 32 values: 34 for q8_0, 18 for q4_0 and iq4_nl, 20 for q4_1,
// 22 for q5_0 and 24 for q5_1. It panics if Validate(kvHeads, headDim) reports an error.
func (t CacheType) RowBytes(kvHeads, headDim int) int {
	t.mustValidate(kvHeads, headDim)
	return t.rowBytes(kvHeads, headDim)
}

// rowBytes is RowBytes for a shape Validate accepts.
func (t CacheType) rowBytes(kvHeads, headDim int) int {
	f := t.format()
	if f.blockBytes != 0 {
		return kvHeads * headDim / blockLen * f.blockBytes
	}
	return kvHeads * f.headBytes(headDim)
}

func (t CacheType) mustValidate(kvHeads, headDim int) {
	if err := t.Validate(kvHeads, headDim); err != nil {
		panic(err)
	}
}

// checkRow panics unless a decoded row of n values and an encoded row of b bytes have
// exactly the sizes t needs for kvHeads heads of headDim values.
func (t CacheType) checkRow(what string, n, b, kvHeads, headDim int) {
	want := t.RowBytes(kvHeads, headDim)
	if n != kvHeads*headDim || b != want {
		panic(fmt.Sprintf("quant: %v %s with kvHeads=%d headDim=%d needs %d float32 values and %d bytes, got %d and %d",
			t, what, kvHeads, headDim, kvHeads*headDim, want, n, b))
	}
}

// checkHead panics unless head is a valid head index, the query has headDim values and
// the encoded row has RowBytes bytes.
func (t CacheType) checkHead(what string, q, rowLen, head, kvHeads, headDim int) {
	// The common case in a few comparisons: attention calls this once per position.
	if t < numCacheTypes && kvHeads >= 1 && headDim >= 1 && head >= 0 && head < kvHeads && q == headDim &&
		(cacheFormats[t].blockBytes == 0 || kvHeads*headDim%blockLen == 0) && rowLen == t.rowBytes(kvHeads, headDim) {
		return
	}
	want := t.RowBytes(kvHeads, headDim)
	if head < 0 || head >= kvHeads || q != headDim || rowLen != want {
		panic(fmt.Sprintf("quant: %v %s with kvHeads=%d headDim=%d needs head in [0,%d), %d float32 values and a %d-byte row, got head %d, %d values and %d bytes",
			t, what, kvHeads, headDim, kvHeads, headDim, want, head, q, rowLen))
	}
}

// Encode quantizes one row src of kvHeads·headDim values (the heads one after another)
// into dst, which must be exactly RowBytes(kvHeads, headDim) long. It panics on a wrong
// length or a shape Validate rejects. Inputs are expected to be finite; NaN and Inf give
// deterministic but meaningless rows (see the package documentation).
func (t CacheType) Encode(dst []byte, src []float32, kvHeads, headDim int) {
	t.checkRow("Encode", len(src), len(dst), kvHeads, headDim)
	t.format().encode(dst, src, headDim)
}

// Decode dequantizes one row src (RowBytes(kvHeads, headDim) bytes) into dst
// (kvHeads·headDim values). It panics on a wrong length or a shape Validate rejects.
func (t CacheType) Decode(dst []float32, src []byte, kvHeads, headDim int) {
	t.checkRow("Decode", len(dst), len(src), kvHeads, headDim)
	f := t.format()
	switch {
	case f.blockBytes != 0:
		f.decodeRange(dst, src, 0)
		return
	case f.decodeRow != nil:
		f.decodeRow(dst, src)
		return
	}
	hb := f.headBytes(headDim)
	for h := range kvHeads {
		f.decodeHead(dst[h*headDim:(h+1)*headDim], src[h*hb:(h+1)*hb])
	}
}

// HeadBytes returns the byte range [lo, hi) of an encoded row that head number head is
// read from (for the block types, the 32-value blocks it overlaps): what DotHead, AxpyHead and Decode
// read for that head. It panics on a shape Validate rejects or a head out of range.
func (t CacheType) HeadBytes(head, kvHeads, headDim int) (lo, hi int) {
	t.mustValidate(kvHeads, headDim)
	if head < 0 || head >= kvHeads {
		panic(fmt.Sprintf("quant: HeadBytes: head %d of %d", head, kvHeads))
	}
	f := t.format()
	if f.blockBytes == 0 {
		hb := f.headBytes(headDim)
		return head * hb, (head + 1) * hb
	}
	first, last := head*headDim/blockLen, ((head+1)*headDim-1)/blockLen
	return first * f.blockBytes, (last + 1) * f.blockBytes
}

// RoundTrip replaces the row x (kvHeads·headDim values) by Decode(Encode(x)): exactly
// the values a cache of type t returns for it. The cache-free reference forward applies
// it to K and V so that cached and reference results stay bit-for-bit equal.
func (t CacheType) RoundTrip(x []float32, kvHeads, headDim int) {
	buf := make([]byte, t.RowBytes(kvHeads, headDim))
	t.Encode(buf, x, kvHeads, headDim)
	t.Decode(x, buf, kvHeads, headDim)
}

// DotHead returns the dot product of q (headDim values) with head number head of the
// encoded row. The result is bit-for-bit equal to
// kernels.Dot(q, d[head*headDim:(head+1)*headDim]) where d is the row decoded by Decode
// (see cache_head.go). It panics on a wrong length, head or shape.
func (t CacheType) DotHead(q []float32, row []byte, head, kvHeads, headDim int) float32 {
	t.checkHead("DotHead", len(q), len(row), head, kvHeads, headDim)
	buf := headBuf(t.format().dotHead != nil)
	d := t.dotHead(q, row, head, headDim, buf)
	putHeadBuf(buf)
	return d
}

// AxpyHead adds a times head number head of the encoded row to dst (headDim values).
// The result is bit-for-bit equal to
// kernels.Axpy(dst, a, d[head*headDim:(head+1)*headDim]) where d is the row decoded by
// Decode. It panics on a wrong length, head or shape.
func (t CacheType) AxpyHead(dst []float32, a float32, row []byte, head, kvHeads, headDim int) {
	t.checkHead("AxpyHead", len(dst), len(row), head, kvHeads, headDim)
	buf := headBuf(t.format().axpyHead != nil)
	t.axpyHead(dst, a, row, head, headDim, buf)
	putHeadBuf(buf)
}
