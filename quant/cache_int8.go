package quant

import "github.com/kvref/kvref/internal/kernels"

// The int8 cache type: for each KV head of a token, a float32 scale s = maxabs/127
// (4 bytes, little-endian; see headScale for the one exception near math.MaxFloat32) followed by headDim int8 values q = clamp(round(x/s), ±127),
// rounding half away from zero. A value decodes as float32(q)*s. A head whose values are
// all zero (or so tiny that maxabs/127 underflows to 0) has s = 0, stores q = 0 and
// decodes to zeros.

// int8Max is the largest int8 code used; -127..127 keeps the grid symmetric.
const int8Max = 127

func encodeInt8(dst []byte, src []float32, headDim int) {
	for h := 0; h*headDim < len(src); h++ {
		x := src[h*headDim : (h+1)*headDim]
		out := dst[h*(scaleBytes+headDim) : (h+1)*(scaleBytes+headDim)]
		s := headScale(maxAbs(x), int8Max)
		putScale(out, s)
		qs := out[scaleBytes:]
		qs = qs[:len(x)]
		if s == 0 {
			clear(qs)
			continue
		}
		for i, v := range x {
			qs[i] = uint8(roundToInt8(v / s))
		}
	}
}

func decodeInt8(dst []float32, src []byte, headDim int) {
	for h := 0; h*headDim < len(dst); h++ {
		x := dst[h*headDim : (h+1)*headDim]
		in := src[h*(scaleBytes+headDim) : (h+1)*(scaleBytes+headDim)]
		s := getScale(in)
		qs := in[scaleBytes:]
		qs = qs[:len(x)]
		for i, b := range qs {
			x[i] = float32(int8(b)) * s
		}
	}
}

// int8At returns the i-th value of an int8 head with scale s, exactly as decodeInt8
// computes it.
func int8At(qs []byte, i int, s float32) float32 {
	return float32(float32(int8(qs[i])) * s)
}

// dotInt8 is kernels.Dot(q, decoded head) on one head's bytes b (scale, then values),
// in the same lane order.
func dotInt8(q []float32, b []byte) float32 {
	n := len(q)
	s := getScale(b)
	b = b[scaleBytes : scaleBytes+n]
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qs := q[i : i+8 : i+8]
		bs := b[i : i+8 : i+8]
		l0 += float32(qs[0] * int8At(bs, 0, s))
		l1 += float32(qs[1] * int8At(bs, 1, s))
		l2 += float32(qs[2] * int8At(bs, 2, s))
		l3 += float32(qs[3] * int8At(bs, 3, s))
		l4 += float32(qs[4] * int8At(bs, 4, s))
		l5 += float32(qs[5] * int8At(bs, 5, s))
		l6 += float32(qs[6] * int8At(bs, 6, s))
		l7 += float32(qs[7] * int8At(bs, 7, s))
	}
	var tail [8]float32
	for j := 0; i+j < n; j++ {
		tail[j] = float32(q[i+j] * int8At(b, i+j, s))
	}
	return kernels.ReduceLanes(l0+tail[0], l1+tail[1], l2+tail[2], l3+tail[3],
		l4+tail[4], l5+tail[5], l6+tail[6], l7+tail[7])
}

// axpyInt8 is kernels.Axpy(dst, a, decoded head) on one head's bytes b.
func axpyInt8(dst []float32, a float32, b []byte) {
	s := getScale(b)
	b = b[scaleBytes : scaleBytes+len(dst)]
	for i := range dst {
		dst[i] += float32(a * int8At(b, i, s))
	}
}
