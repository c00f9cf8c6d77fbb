package quant

import (
	"encoding/binary"
	"math"

	"github.com/kvref/kvref/internal/half"
)

// This file holds the few pieces of C arithmetic that ggml's quantizers rely on, written
// so that Go computes the same bits. Go may fuse x*y+z into one FMA instruction (it does
// on arm64, and on amd64 with GOAMD64=v3); an explicit float32(...) conversion forbids
// that, so every product that is added or subtracted in the weight formats' code is
// wrapped in one, as ggml's separately rounded C arithmetic requires.

// nearestInt is ggml's nearest_int: round to nearest, ties to even, by adding 1.5·2^23
// and reading the low mantissa bits. It is exact for |f| <= 2^22 - 1; beyond that (and
// for NaN and ±Inf) it returns what a release build of ggml returns, whose range
// assertion is compiled out.
//
// The argument is usually a product; float32(f) rounds it before the addition, as C does,
// so that Go cannot fuse the two into one FMA once nearestInt is inlined.
func nearestInt(f float32) int32 {
	v := float32(f) + 12582912 // 1.5·2^23: the sum's last mantissa bit has weight 1
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// truncToInt32 is C's conversion of a float to an integer type as x86-64 performs it
// (cvttss2si): truncation toward zero, and 0x80000000 for NaN and for values whose
// truncation does not fit in an int32. Converting the result to int8 or uint8 keeps its
// low byte, as C compilers for x86-64 do when they narrow it.
func truncToInt32(f float32) int32 {
	if !(f >= -2147483648 && f < 2147483648) { // also catches NaN
		return math.MinInt32
	}
	return int32(f)
}

// roundAway is C's roundf: round to nearest, ties away from zero. The float64 round trip
// is exact.
func roundAway(f float32) float32 { return float32(math.Round(float64(f))) }

// absf is C's fabsf.
func absf(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// sqrtf is C's sqrtf: the float64 square root rounded to float32 is the correctly rounded
// float32 square root (53 >= 2·24+2 bits, so the double rounding is harmless).
func sqrtf(f float32) float32 { return float32(math.Sqrt(float64(f))) }

// loadF16 returns the fp16 value stored little-endian at b[0:2] as float32, as ggml's
// GGML_FP16_TO_FP32 does (exactly).
func loadF16(b []byte) float32 { return half.F16Table[binary.LittleEndian.Uint16(b)] }

// storeF16 stores f as fp16, little-endian, rounded to nearest even as ggml's
// GGML_FP32_TO_FP16 does (the two agree on every value but NaN payloads).
func storeF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, half.F32ToF16(f)) }
