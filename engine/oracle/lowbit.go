package oracle

import "math"

// llama.cpp's 4- and 5-bit cache types, from ggml's block definitions (ggml-common.h):
// the row in blocks of 32 values, each block
//
//	q4_0    binary16 d, 16 bytes qs                       value (c − 8)·d
//	q4_1    binary16 d, binary16 m, 16 bytes qs           value c·d + m
//	iq4_nl  binary16 d, 16 bytes qs                       value d·kvalues_iq4nl[c]
//	q5_0    binary16 d, 4 bytes qh, 16 bytes qs           value (c − 16)·d
//	q5_1    binary16 d, binary16 m, 4 bytes qh, 16 bytes qs  value c·d + m
//
// where element j < 16 has the low nibble of qs[j] as the low four bits of its code c and
// element 16+j the high nibble, and for the 5-bit types bit j of the little-endian qh is
// the fifth bit of element j's code. The decoders compute the values exactly in float64 (the
// engine rounds c·d + m once more to float32, which the reading check's tolerance covers).

// iq4nlGrid is ggml's kvalues_iq4nl.
var iq4nlGrid = [16]float64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// lowBitBlock describes one of the 4- and 5-bit block layouts: the block's size and the
// offsets of its fields (m and qh < 0 when absent).
type lowBitBlock struct {
	size, m, qh, qs int
	value           func(code int, d, m float64) float64
}

var (
	q4_0Block  = lowBitBlock{size: 18, m: -1, qh: -1, qs: 2, value: func(c int, d, _ float64) float64 { return float64(c-8) * d }}
	q4_1Block  = lowBitBlock{size: 20, m: 2, qh: -1, qs: 4, value: func(c int, d, m float64) float64 { return float64(c)*d + m }}
	iq4nlBlock = lowBitBlock{size: 18, m: -1, qh: -1, qs: 2, value: func(c int, d, _ float64) float64 { return d * iq4nlGrid[c] }}
	q5_0Block  = lowBitBlock{size: 22, m: -1, qh: 2, qs: 6, value: func(c int, d, _ float64) float64 { return float64(c-16) * d }}
	q5_1Block  = lowBitBlock{size: 24, m: 2, qh: 4, qs: 8, value: func(c int, d, m float64) float64 { return float64(c)*d + m }}
)

// row is the row size: kvHeads·headDim/32 blocks.
func (f lowBitBlock) row(kvHeads, headDim int) int { return kvHeads * headDim / 32 * f.size }

// decode decodes a row of blocks.
func (f lowBitBlock) decode(dst []float64, row []byte, kvHeads, headDim int) {
	for blk := 0; blk*32 < len(dst); blk++ {
		b := row[blk*f.size : (blk+1)*f.size]
		d, m := binary16.at(b), 0.0
		if f.m >= 0 {
			m = binary16.at(b[f.m:])
		}
		var qh uint32
		if f.qh >= 0 {
			qh = uint32(b[f.qh]) | uint32(b[f.qh+1])<<8 | uint32(b[f.qh+2])<<16 | uint32(b[f.qh+3])<<24
		}
		for j := range 32 {
			c := int(b[f.qs+j%16]) >> (j / 16 * 4) & 0xf
			c |= int(qh>>j&1) << 4
			dst[blk*32+j] = f.value(c, d, m)
		}
	}
}

// e16 bounds one rounding of a finite v to binary16: half an ulp, 2^-11·|v| for a normal
// half and 2^-25 for a subnormal one.
func e16(v float64) float64 { return math.Max(math.Ldexp(math.Abs(v), -11), math.Ldexp(1, -25)) }

// blockExtreme returns the first value of largest magnitude of a block, as ggml's quantizers
// pick it.
func blockExtreme(x []float32) float64 {
	var xmax float64
	for _, v := range x {
		if math.Abs(float64(v)) > math.Abs(xmax) {
			xmax = float64(v)
		}
	}
	return xmax
}

// boundSymmetric is the bound of q4_0 (steps 8) and q5_0 (steps 16): per block,
// d = xmax/−steps, codes round(x/d) + steps clamped to 2·steps−1, so the grid −steps·d ..
// (steps−1)·d reaches one step further on xmax's side: half a step, plus the excess of a
// value of the other sign beyond steps−½ steps (up to one step), plus up to steps steps of
// d's binary16 rounding and the float32 roundings. A d from 65520 on is an infinite half.
func boundSymmetric(steps float64) func(dst []float64, x []float32, kvHeads, headDim int) {
	return func(dst []float64, x []float32, kvHeads, headDim int) {
		for blk := 0; blk*32 < len(x); blk++ {
			xs := x[blk*32 : (blk+1)*32]
			xmax := blockExtreme(xs)
			m := math.Abs(xmax)
			d := m / steps
			for j, v := range xs {
				excess := 0.0
				if xmax != 0 {
					excess = math.Max(0, -steps*float64(v)/xmax-(steps-0.5))
				}
				b := d*(0.5+excess) + steps*e16(d) + slack32*m + tiny32
				if d >= 65520 {
					b = math.Inf(1)
				}
				dst[blk*32+j] = b
			}
		}
	}
}

// boundAffine is the bound of q4_1 (15 steps) and q5_1 (31 steps): per block,
// r = (max−min)/steps and codes round((x−min)/r) on 0..steps: half a step, plus up to
// steps steps of r's binary16 rounding, the binary16 rounding of the stored min, and the
// float32 roundings (of the quotient and of the decoded c·r + min). An r or a min from
// 65520 on is an infinite half.
func boundAffine(steps float64) func(dst []float64, x []float32, kvHeads, headDim int) {
	return func(dst []float64, x []float32, kvHeads, headDim int) {
		for blk := 0; blk*32 < len(x); blk++ {
			xs := x[blk*32 : (blk+1)*32]
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, v := range xs {
				lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
			}
			r := (hi - lo) / steps
			for j, v := range xs {
				b := r/2 + steps*e16(r) + e16(lo) + slack32*(math.Abs(float64(v))+math.Abs(lo)+(steps+1)*r) + tiny32
				if r >= 65520 || math.Abs(lo) >= 65520 {
					b = math.Inf(1)
				}
				dst[blk*32+j] = b
			}
		}
	}
}

// boundIQ4NL is iq4_nl's bound, from the format's definition alone: per block,
// d₀ = xmax/−127, each code is the grid point nearest to t = x/d₀, and the stored scale D is
// the least-squares scale for those codes with weights w = x². So |x − D·q| <=
// |d₀|·|t − q| + |q|·|D − d₀|, where |t − q| is t's distance to the grid, and, because D
// minimizes E(s) = Σ w (x − s·q)² and the extreme value contributes w_max·127²·(s − d₀)² to
// it, 127²·m²·(D − d₀)² <= E(D) <= E(d₀) = Σ w·d₀²·|t − q|². Then |q| is the larger of t's
// two neighbouring grid points (so that a tie may go either way), and D's binary16 rounding
// and the float32 roundings of its sums are added. A block whose |xmax| is below 1e-15
// stores zeros; a scale that may overflow binary16, or weights x² that overflow float32,
// make the bound infinite.
func boundIQ4NL(dst []float64, x []float32, kvHeads, headDim int) {
	for blk := 0; blk*32 < len(x); blk++ {
		xs := x[blk*32 : (blk+1)*32]
		xmax := blockExtreme(xs)
		m := math.Abs(xmax)
		out := dst[blk*32 : (blk+1)*32]
		if m < 1e-15 {
			for j := range out {
				out[j] = m + tiny32
			}
			continue
		}
		d0 := xmax / -127
		var dist, qmax [32]float64
		e := 0.0
		for j, v := range xs {
			t := float64(v) / d0
			dist[j], qmax[j] = iq4nlDistance(t)
			e += float64(v) * float64(v) * d0 * d0 * dist[j] * dist[j]
		}
		delta := math.Sqrt(e) / (127 * m)
		scale := math.Abs(d0) + delta
		for j := range out {
			out[j] = math.Abs(d0)*dist[j] + qmax[j]*(delta+e16(scale)+math.Ldexp(scale, -16)) + slack32*m + tiny32
			if scale >= 65520 || m >= 1e19 {
				out[j] = math.Inf(1)
			}
		}
	}
}

// iq4nlDistance returns t's distance to the nearest grid point and the larger magnitude of
// the grid points on either side of t (the ends when t is beyond them).
func iq4nlDistance(t float64) (dist, qmax float64) {
	if t <= iq4nlGrid[0] {
		return iq4nlGrid[0] - t, -iq4nlGrid[0]
	}
	if t >= iq4nlGrid[15] {
		return t - iq4nlGrid[15], iq4nlGrid[15]
	}
	i := 1
	for iq4nlGrid[i] < t {
		i++
	}
	lo, hi := iq4nlGrid[i-1], iq4nlGrid[i]
	return math.Min(t-lo, hi-t), math.Max(math.Abs(lo), math.Abs(hi))
}
