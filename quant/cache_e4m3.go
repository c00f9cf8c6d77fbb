package quant

import "github.com/kvref/kvref/internal/kernels"

// The fp8-e4m3 cache type: for each KV head of a token, a float32 scale
// s = maxabs/448 (4 bytes, little-endian; see headScale for the one exception near
// math.MaxFloat32) followed by headDim OCP E4M3 bytes
// F32ToFP8E4M3(x/s). A value decodes as FP8E4M3ToF32(b)*s. A head whose values are all
// zero (or so tiny that maxabs/448 underflows to 0) has s = 0 and stores zero codes.

func encodeE4M3Scaled(dst []byte, src []float32, headDim int) {
	for h := 0; h*headDim < len(src); h++ {
		x := src[h*headDim : (h+1)*headDim]
		out := dst[h*(scaleBytes+headDim) : (h+1)*(scaleBytes+headDim)]
		s := headScale(maxAbs(x), FP8E4M3Max)
		putScale(out, s)
		bs := out[scaleBytes:]
		bs = bs[:len(x)]
		if s == 0 {
			clear(bs)
			continue
		}
		for i, v := range x {
			bs[i] = F32ToFP8E4M3(v / s)
		}
	}
}

func decodeE4M3Scaled(dst []float32, src []byte, headDim int) {
	for h := 0; h*headDim < len(dst); h++ {
		x := dst[h*headDim : (h+1)*headDim]
		in := src[h*(scaleBytes+headDim) : (h+1)*(scaleBytes+headDim)]
		s := getScale(in)
		bs := in[scaleBytes:]
		bs = bs[:len(x)]
		for i, b := range bs {
			x[i] = e4m3Table[b] * s
		}
	}
}

// e4m3At returns the i-th value of an fp8-e4m3 head with scale s, exactly as
// decodeE4M3Scaled computes it.
func e4m3At(bs []byte, i int, s float32) float32 {
	return float32(e4m3Table[bs[i]] * s)
}

// dotE4M3Scaled is kernels.Dot(q, decoded head) on one head's bytes b (scale, then
// codes), in the same lane order.
func dotE4M3Scaled(q []float32, b []byte) float32 {
	n := len(q)
	s := getScale(b)
	b = b[scaleBytes : scaleBytes+n]
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qs := q[i : i+8 : i+8]
		bs := b[i : i+8 : i+8]
		l0 += float32(qs[0] * e4m3At(bs, 0, s))
		l1 += float32(qs[1] * e4m3At(bs, 1, s))
		l2 += float32(qs[2] * e4m3At(bs, 2, s))
		l3 += float32(qs[3] * e4m3At(bs, 3, s))
		l4 += float32(qs[4] * e4m3At(bs, 4, s))
		l5 += float32(qs[5] * e4m3At(bs, 5, s))
		l6 += float32(qs[6] * e4m3At(bs, 6, s))
		l7 += float32(qs[7] * e4m3At(bs, 7, s))
	}
	var tail [8]float32
	for j := 0; i+j < n; j++ {
		tail[j] = float32(q[i+j] * e4m3At(b, i+j, s))
	}
	return kernels.ReduceLanes(l0+tail[0], l1+tail[1], l2+tail[2], l3+tail[3],
		l4+tail[4], l5+tail[5], l6+tail[6], l7+tail[7])
}

// axpyE4M3Scaled is kernels.Axpy(dst, a, decoded head) on one head's bytes b.
func axpyE4M3Scaled(dst []float32, a float32, b []byte) {
	s := getScale(b)
	b = b[scaleBytes : scaleBytes+len(dst)]
	for i := range dst {
		dst[i] += float32(a * e4m3At(b, i, s))
	}
}
