// Package kernels holds the numeric inner loops of kvref: dot products, matrix–vector and
// matrix–matrix products, RMSNorm, softmax, RoPE and SwiGLU.
//
// Every reduction has exactly one order, documented here, so that results never depend on
// how work is batched, paged or threaded. The dot product of two length-n vectors works in
// eight lanes: element i is accumulated into lane i%8 as lane += float32(x[i]*y[i]) (a
// rounded multiply followed by a rounded add, never a fused multiply-add), and the lanes are
// combined at the end as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), which is the order of the
// usual 256-bit horizontal sum. Fast (assembly) versions must keep this order.
package kernels

// Dot returns the dot product of x and y[:len(x)] in the package's fixed reduction order.
func Dot(x, y []float32) float32 {
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

// ReduceLanes combines eight lane sums in the package's fixed order
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
func ReduceLanes(l0, l1, l2, l3, l4, l5, l6, l7 float32) float32 {
	a0 := l0 + l4
	a1 := l1 + l5
	a2 := l2 + l6
	a3 := l3 + l7
	return (a0 + a2) + (a1 + a3)
}
