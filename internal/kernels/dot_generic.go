package kernels

// dotGeneric is the portable definition of Dot: element i goes to lane i%8 as
// lane += float32(x[i]*y[i]); the last len(x)%8 products are written into a zeroed
// eight-element tail, and the tail is added to the lanes, so lanes past the end receive +0.
// The lanes are combined by ReduceLanes. y must be at least as long as x.
//
// A lane starts at +0 and can never become -0 (in round-to-nearest, a sum is -0 only when
// both addends are -0), so adding the +0 padding changes no lane; Dot never returns -0.
func dotGeneric(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		xs := x[i : i+8 : i+8]
		ys := y[i : i+8 : i+8]
		l0 += float32(xs[0] * ys[0])
		l1 += float32(xs[1] * ys[1])
		l2 += float32(xs[2] * ys[2])
		l3 += float32(xs[3] * ys[3])
		l4 += float32(xs[4] * ys[4])
		l5 += float32(xs[5] * ys[5])
		l6 += float32(xs[6] * ys[6])
		l7 += float32(xs[7] * ys[7])
	}
	var tail [8]float32
	for j := 0; i+j < n; j++ {
		tail[j] = float32(x[i+j] * y[i+j])
	}
	l0 += tail[0]
	l1 += tail[1]
	l2 += tail[2]
	l3 += tail[3]
	l4 += tail[4]
	l5 += tail[5]
	l6 += tail[6]
	l7 += tail[7]
	return ReduceLanes(l0, l1, l2, l3, l4, l5, l6, l7)
}

// dotRowsStridedGeneric is the portable definition of DotRowsStrided.
func dotRowsStridedGeneric(out, x, w []float32, stride int) {
	for r := range out {
		out[r] = dotGeneric(x, w[r*stride:r*stride+len(x)])
	}
}
