package oracle

import "math"

// attention64 is one query head's attention over positions 0..n-1 in float64: scores
// q·k_t·scale (soft-capped at softCap·tanh(s/softCap) when softCap > 0, Gemma 2), a
// softmax, and the weighted sum of the values. keys and values hold n rows of rowLen
// values; the head reads [off, off+hd) of each. It writes the output into out and returns
// the weights (w, reused when long enough).
func attention64(out []float64, q []float32, keys, values []float64, n, rowLen, off int, scale, softCap float64, w []float64) []float64 {
	hd := len(out)
	if cap(w) < n {
		w = make([]float64, n)
	}
	w = w[:n]
	mx := math.Inf(-1)
	for t := range n {
		s := 0.0
		for i := range hd {
			s += float64(q[i]) * keys[t*rowLen+off+i]
		}
		w[t] = s * scale
		if softCap > 0 {
			w[t] = softCap * math.Tanh(w[t]/softCap)
		}
		mx = math.Max(mx, w[t])
	}
	sum := 0.0
	for t := range w {
		w[t] = math.Exp(w[t] - mx)
		sum += w[t]
	}
	clear(out)
	for t := range w {
		w[t] /= sum
		for i := range hd {
			out[i] += w[t] * values[t*rowLen+off+i]
		}
	}
	return w
}

// u32 is the unit roundoff of float32.
const u32 = 0x1p-24

// gamma is the classic bound n·u/(1−n·u) on the relative error of n float32 roundings.
func gamma(n int) float64 { return float64(n) * u32 / (1 - float64(n)*u32) }

// roundingTolerance bounds, per output element, how far the engine's float32 attention may
// be from attention64 over the same decoded keys and values: every score carries the dot
// product's and the scaling's roundings (γ(hd+2)·scale·Σ|q_i k_ti|) and those of the
// max-subtraction before exp, the weights those of exp, the sum and the normalisation, and the
// output those of the position-ordered sums. A score error ε changes a weight by a factor at
// most e^{±2ε}. A soft-cap is 1-Lipschitz, so it carries a score's error through unchanged,
// and adds its own three roundings (divide, tanh, multiply). Twice the first-order bound, so
// that it is a bound and not an estimate.
func roundingTolerance(tol []float64, q []float32, keys, values []float64, w []float64, n, rowLen, off int, scale, softCap float64) {
	hd := len(tol)
	mx := 0.0
	for t := range n {
		mx = math.Max(mx, math.Abs(scoreOf(q, keys, t, rowLen, off, scale)))
	}
	eps := 0.0
	for t := range n {
		dot := 0.0
		for i := range hd {
			dot += math.Abs(float64(q[i]) * keys[t*rowLen+off+i])
		}
		s := math.Abs(scoreOf(q, keys, t, rowLen, off, scale))
		capRounding := 0.0
		if softCap > 0 {
			capRounding = 4 * u32 * s
		}
		eps = math.Max(eps, gamma(hd+2)*scale*dot+2*u32*(s+mx)+capRounding)
	}
	rel := math.Expm1(2*eps) + gamma(2*n+8)
	for i := range hd {
		sum := 0.0
		for t := range n {
			sum += w[t] * math.Abs(values[t*rowLen+off+i])
		}
		tol[i] = 2*rel*sum + 1e-37
	}
}

// scoreOf is q·k_t·scale in float64.
func scoreOf(q []float32, keys []float64, t, rowLen, off int, scale float64) float64 {
	s := 0.0
	for i := range q {
		s += float64(q[i]) * keys[t*rowLen+off+i]
	}
	return s * scale
}

// formatBound bounds, per output element, how far attention over stored keys and values may
// be from attention over the exact ones, given element bounds ek and ev (n rows of rowLen):
// with ε = scale·max_t Σ_i |q_i|·ek(t, i), every weight moves by a factor within e^{±2ε},
// so |out̂_i − out_i| <= (e^{2ε}−1)·(Σ_t w_t|v_ti| + max_t ev(t, i)) + max_t ev(t, i), for w
// and v the exact weights and values.
func formatBound(b []float64, q []float32, ek, ev, values, w []float64, n, rowLen, off int, scale float64) {
	hd := len(b)
	eps := 0.0
	for t := range n {
		e := 0.0
		for i := range hd {
			e += math.Abs(float64(q[i])) * ek[t*rowLen+off+i]
		}
		eps = math.Max(eps, scale*e)
	}
	grow := math.Expm1(2 * eps)
	for i := range hd {
		sum, worst := 0.0, 0.0
		for t := range n {
			sum += w[t] * math.Abs(values[t*rowLen+off+i])
			worst = math.Max(worst, ev[t*rowLen+off+i])
		}
		b[i] = grow*(sum+worst) + worst
	}
}
