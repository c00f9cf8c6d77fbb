package kernels

// streamReadGeneric sums x with eight independent accumulators (StreamRead's portable
// path: fast enough to be limited by memory rather than by one chain of additions).
func streamReadGeneric(x []float32) float32 {
	var a0, a1, a2, a3, a4, a5, a6, a7 float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		a0 += v[0]
		a1 += v[1]
		a2 += v[2]
		a3 += v[3]
		a4 += v[4]
		a5 += v[5]
		a6 += v[6]
		a7 += v[7]
	}
	for ; i < len(x); i++ {
		a0 += x[i]
	}
	return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}
