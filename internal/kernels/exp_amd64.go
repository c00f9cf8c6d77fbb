//go:build amd64 && !purego

package kernels

// The vector exponentials of Softmax and SwiGLU (implExpAVX512, exp_avx512_amd64.s, and
// implExpAVX2, exp_avx2_amd64.s) repeat, eight lanes at a time, what math.Exp computes on
// amd64 CPUs with FMA, and so need FMA as well as AVX-512F or AVX2 (math.Exp takes another
// path without FMA).

// expShiftedAVX512 and swigluAVX512 do expShiftedGeneric's and swigluGeneric's work on the
// first n elements (n a multiple of 8), eight at a time, and stop before the first eight
// that hold an input for which math.Exp leaves its plain path (a result that underflows,
// is subnormal or overflows, an infinity or a NaN): they return how many elements they
// did. Implemented in exp_avx512_amd64.s.
//
//go:noescape
func expShiftedAVX512(x *float32, n int, shift float32) int

//go:noescape
func swigluAVX512(gate, up *float32, n int) int

// expShiftedAVX2 and swigluAVX2 are expShiftedAVX512 and swigluAVX512 with AVX2 and FMA,
// four float64 lanes per register (exp_avx2_amd64.s): the same bits.
//
//go:noescape
func expShiftedAVX2(x *float32, n int, shift float32) int

//go:noescape
func swigluAVX2(gate, up *float32, n int) int

func expShifted(x []float32, shift float32) {
	for (implExpAVX512.on || implExpAVX2.on) && len(x) >= 8 {
		var done int
		if implExpAVX512.on {
			done = expShiftedAVX512(&x[0], len(x)&^7, shift)
		} else {
			done = expShiftedAVX2(&x[0], len(x)&^7, shift)
		}
		x = x[done:]
		if len(x) >= 8 { // eight with a lane outside the plain path
			expShiftedGeneric(x[:8], shift)
			x = x[8:]
		}
	}
	expShiftedGeneric(x, shift)
}

func swiglu(gate, up []float32) {
	for (implExpAVX512.on || implExpAVX2.on) && len(gate) >= 8 {
		var done int
		if implExpAVX512.on {
			done = swigluAVX512(&gate[0], &up[0], len(gate)&^7)
		} else {
			done = swigluAVX2(&gate[0], &up[0], len(gate)&^7)
		}
		gate, up = gate[done:], up[done:]
		if len(gate) >= 8 {
			swigluGeneric(gate[:8], up[:8])
			gate, up = gate[8:], up[8:]
		}
	}
	swigluGeneric(gate, up)
}
