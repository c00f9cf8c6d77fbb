package kernels

import "math"

// RMSNorm writes out[i] = w[i] · (x[i] · s) with s = 1/sqrt(mean(x²) + eps), the Llama
// normalisation. The sum of squares is Dot(x, x), so its order is the package's fixed order.
func RMSNorm(out, x, w []float32, eps float32) {
	n := len(x)
	out = out[:n]
	w = w[:n]
	ss := Dot(x, x)/float32(n) + eps
	s := float32(1 / math.Sqrt(float64(ss)))
	for i, v := range x {
		out[i] = w[i] * float32(v*s)
	}
}

// Softmax replaces x with exp(x - max) / sum, summing left to right: each exponential is
// float32(math.Exp(float64(x[i] - max))), the sum a float32 sum in increasing i, and every
// element is then multiplied by 1/sum. On amd64 with AVX-512 and FMA the exponentials are
// computed eight at a time with math.Exp's own arithmetic (exp_avx512_amd64.s), and with
// AVX the maximum and the last multiplies too (maxOf, Scale): the same bits.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	expShifted(x, maxOf(x))
	var sum float32
	for _, e := range x {
		sum += e
	}
	scale(x, 1/sum)
}

// SwiGLU writes gate[i] = silu(gate[i]) · up[i], with silu(g) = g / (1 + e^-g) computed in
// float64 and rounded to float32: float32(float64(g) / (1 + math.Exp(-float64(g)))). On
// amd64 with AVX-512 and FMA it runs eight at a time with math.Exp's own arithmetic: the
// same bits.
func SwiGLU(gate, up []float32) {
	swiglu(gate, up[:len(gate)])
}

// Add sets dst[i] += x[i].
func Add(dst, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += x[i]
	}
}
