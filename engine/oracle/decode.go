package oracle

import "math"

// A minifloat is a binary floating-point format: a sign bit, exp exponent bits with the
// given bias, and man mantissa bits, stored little-endian in size bytes. Exponent field 0
// holds zeros and subnormals, m·2^(1−bias−man); the others (2^man + m)·2^(e−bias−man),
// except the all-ones exponent when special is set (IEEE: mantissa 0 is ±Inf, the rest NaN)
// and the single all-ones code of OCP E4M3 ("FN": no infinities, S.1111.111 is NaN).
type minifloat struct {
	size, exp, man, bias int
	special              bool // the all-ones exponent holds ±Inf and NaN (IEEE 754, OCP E5M2)
	nanOnlyAllOnes       bool // only the all-ones code is NaN (OCP E4M3)
}

var (
	binary32 = minifloat{size: 4, exp: 8, man: 23, bias: 127, special: true}     // IEEE 754 single
	binary16 = minifloat{size: 2, exp: 5, man: 10, bias: 15, special: true}      // IEEE 754 half
	bfloat16 = minifloat{size: 2, exp: 8, man: 7, bias: 127, special: true}      // the top half of a binary32
	e4m3     = minifloat{size: 1, exp: 4, man: 3, bias: 7, nanOnlyAllOnes: true} // OCP 8-bit FP, E4M3
	e5m2     = minifloat{size: 1, exp: 5, man: 2, bias: 15, special: true}       // OCP 8-bit FP, E5M2
)

// value decodes the code c (the format's bits, right-aligned).
func (f minifloat) value(c uint32) float64 {
	sign := 1.0
	if c>>(f.exp+f.man)&1 == 1 {
		sign = -1
	}
	e := int(c>>f.man) & (1<<f.exp - 1)
	m := int(c & (1<<f.man - 1))
	allOnes := 1<<f.exp - 1
	switch {
	case f.special && e == allOnes && m == 0:
		return math.Inf(int(sign))
	case f.special && e == allOnes, f.nanOnlyAllOnes && e == allOnes && m == 1<<f.man-1:
		return math.NaN()
	case e == 0:
		return sign * math.Ldexp(float64(m), 1-f.bias-f.man)
	}
	return sign * math.Ldexp(float64(1<<f.man+m), e-f.bias-f.man)
}

// at decodes the value stored at b[0:size].
func (f minifloat) at(b []byte) float64 {
	var c uint32
	for i := f.size - 1; i >= 0; i-- {
		c = c<<8 | uint32(b[i])
	}
	return f.value(c)
}

// decodeFloats decodes a row of unscaled values of format f, one after another.
func decodeFloats(f minifloat) func(dst []float64, row []byte, kvHeads, headDim int) {
	return func(dst []float64, row []byte, kvHeads, headDim int) {
		for i := range dst {
			dst[i] = f.at(row[i*f.size:])
		}
	}
}

// decodeInt8 decodes int8 rows: per head, a binary32 scale s, then headDim two's-complement
// bytes q, each the value q·s.
func decodeInt8(dst []float64, row []byte, kvHeads, headDim int) {
	for h := range kvHeads {
		head := row[h*(4+headDim):]
		s := binary32.at(head)
		for i := range headDim {
			dst[h*headDim+i] = float64(int8(head[4+i])) * s
		}
	}
}

// decodeE4M3Scaled decodes fp8-e4m3 rows: per head, a binary32 scale s, then headDim E4M3
// codes, each the value e4m3(code)·s.
func decodeE4M3Scaled(dst []float64, row []byte, kvHeads, headDim int) {
	for h := range kvHeads {
		head := row[h*(4+headDim):]
		s := binary32.at(head)
		for i := range headDim {
			dst[h*headDim+i] = e4m3.at(head[4+i:]) * s
		}
	}
}

// decodeQ8_0 decodes q8_0 rows (ggml's block_q8_0): the row in blocks of 32 values, each a
// binary16 scale d followed by 32 int8 values q, each the value q·d.
func decodeQ8_0(dst []float64, row []byte, kvHeads, headDim int) {
	for blk := 0; blk*32 < len(dst); blk++ {
		b := row[blk*34:]
		d := binary16.at(b)
		for i := range 32 {
			dst[blk*32+i] = float64(int8(b[2+i])) * d
		}
	}
}
