package quant

import "github.com/kvref/kvref/internal/kernels"

// The int8 and fp8-e4m3 cache types scale each KV head of a token on its own: a float32
// scale s = maxabs/max (4 bytes, little-endian; see headScale for the one exception near
// math.MaxFloat32) followed by headDim one-byte codes of x/s. A code b decodes as
// values[b]*s. A head whose values are all zero (or so tiny that maxabs/max underflows to
// 0) has s = 0, stores zero codes and decodes to zeros.
//
//   - int8: max = 127, the code is the two's-complement byte of clamp(round(x/s), ±127),
//     rounding half away from zero (roundToInt8), and values[b] = float32(int8(b)).
//   - fp8-e4m3: max = 448 (FP8E4M3Max), the code is F32ToFP8E4M3(x/s), and values[b] =
//     FP8E4M3ToF32(b).

// int8Max is the largest int8 code used; -127..127 keeps the grid symmetric.
const int8Max = 127

// scaledCodec is one per-head scaled cache type: how a value divided by its head's scale
// becomes a byte, and what each byte is worth before the scale is applied.
type scaledCodec struct {
	max    float32       // the largest code's magnitude: s = maxabs/max
	fp8    bool          // codes are F32ToFP8E4M3(x/s), not roundToInt8(x/s)
	values *[256]float32 // the value of each code, exactly
}

var (
	int8Codec = scaledCodec{max: int8Max, values: int8Values()}
	e4m3Codec = scaledCodec{max: FP8E4M3Max, fp8: true, values: e4m3Table}
)

// int8Values returns float32(int8(b)) for every byte b.
func int8Values() *[256]float32 {
	var t [256]float32
	for b := range t {
		t[b] = float32(int8(uint8(b)))
	}
	return &t
}

func (c *scaledCodec) encode(dst []byte, src []float32, headDim int) {
	for h := 0; h*headDim < len(src); h++ {
		x := src[h*headDim : (h+1)*headDim]
		out := dst[h*(scaleBytes+headDim) : (h+1)*(scaleBytes+headDim)]
		s := headScale(maxAbs(x), c.max)
		putScale(out, s)
		bs := out[scaleBytes:]
		bs = bs[:len(x)]
		if s == 0 {
			clear(bs)
			continue
		}
		if c.fp8 { // one loop per code, so that each inlines its rounding
			for i, v := range x {
				bs[i] = F32ToFP8E4M3(v / s)
			}
		} else {
			for i, v := range x {
				bs[i] = uint8(roundToInt8(v / s))
			}
		}
	}
}

// decodeHead decodes one head's bytes b (scale, then len(x) codes) into x.
func (c *scaledCodec) decodeHead(x []float32, b []byte) {
	values := c.values
	s := getScale(b)
	bs := b[scaleBytes : scaleBytes+len(x)]
	for i, b := range bs {
		x[i] = values[b] * s
	}
}

// scaledAt returns the i-th value of a head with scale s, exactly as decode computes it.
func scaledAt(values *[256]float32, bs []byte, i int, s float32) float32 {
	return float32(values[bs[i]] * s)
}

// dot is kernels.Dot(q, decoded head) on one head's bytes b (scale, then codes), in the
// same lane order.
func (c *scaledCodec) dot(q []float32, b []byte) float32 {
	values := c.values
	n := len(q)
	s := getScale(b)
	b = b[scaleBytes : scaleBytes+n]
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qs := q[i : i+8 : i+8]
		bs := b[i : i+8 : i+8]
		l0 += float32(qs[0] * scaledAt(values, bs, 0, s))
		l1 += float32(qs[1] * scaledAt(values, bs, 1, s))
		l2 += float32(qs[2] * scaledAt(values, bs, 2, s))
		l3 += float32(qs[3] * scaledAt(values, bs, 3, s))
		l4 += float32(qs[4] * scaledAt(values, bs, 4, s))
		l5 += float32(qs[5] * scaledAt(values, bs, 5, s))
		l6 += float32(qs[6] * scaledAt(values, bs, 6, s))
		l7 += float32(qs[7] * scaledAt(values, bs, 7, s))
	}
	var tail [8]float32
	for j := 0; i+j < n; j++ {
		tail[j] = float32(q[i+j] * scaledAt(values, b, i+j, s))
	}
	return kernels.ReduceLanes(l0+tail[0], l1+tail[1], l2+tail[2], l3+tail[3],
		l4+tail[4], l5+tail[5], l6+tail[6], l7+tail[7])
}
