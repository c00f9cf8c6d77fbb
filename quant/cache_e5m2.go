package quant

import "github.com/kvref/kvref/internal/kernels"

// The fp8-e5m2 cache type stores each value as one OCP E5M2 byte with no scale,
// rounded to nearest even and saturated to ±57344 by F32ToFP8E5M2.

func encodeE5M2(dst []byte, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = F32ToFP8E5M2(v)
	}
}

func decodeE5M2(dst []float32, src []byte) {
	src = src[:len(dst)]
	for i, b := range src {
		dst[i] = e5m2Table[b]
	}
}

// dotE5M2 is kernels.Dot(q, decoded head) on the head's bytes b, in the same lane order.
func dotE5M2(q []float32, b []byte) float32 {
	n := len(q)
	b = b[:n]
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qs := q[i : i+8 : i+8]
		bs := b[i : i+8 : i+8]
		l0 += float32(qs[0] * e5m2Table[bs[0]])
		l1 += float32(qs[1] * e5m2Table[bs[1]])
		l2 += float32(qs[2] * e5m2Table[bs[2]])
		l3 += float32(qs[3] * e5m2Table[bs[3]])
		l4 += float32(qs[4] * e5m2Table[bs[4]])
		l5 += float32(qs[5] * e5m2Table[bs[5]])
		l6 += float32(qs[6] * e5m2Table[bs[6]])
		l7 += float32(qs[7] * e5m2Table[bs[7]])
	}
	var tail [8]float32
	for j := 0; i+j < n; j++ {
		tail[j] = float32(q[i+j] * e5m2Table[b[i+j]])
	}
	return kernels.ReduceLanes(l0+tail[0], l1+tail[1], l2+tail[2], l3+tail[3],
		l4+tail[4], l5+tail[5], l6+tail[6], l7+tail[7])
}
