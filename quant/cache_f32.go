package quant

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The f32 cache type stores each value as its float32 bits, little-endian: 4 bytes per
// value, no rounding at all.

func encodeF32(dst []byte, src []float32) {
	if v, ok := asFloat32s(dst, len(src)); ok { // the values are the bytes: a plain copy
		copy(v, src)
		return
	}
	dst = dst[:4*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func decodeF32(dst []float32, src []byte) {
	if v, ok := asFloat32s(src, len(dst)); ok { // the bytes are the values: a plain copy
		copy(dst, v)
		return
	}
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = f32At(src, i)
	}
}

// f32At returns the i-th float32 stored in b.
func f32At(b []byte, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
}

// asFloat32s returns b's first n float32 values as a []float32 sharing b's memory, when
// the machine is little-endian (so the bytes are already the values) and b is 4-byte
// aligned; ok is false otherwise and the caller decodes the bytes instead.
func asFloat32s(b []byte, n int) (v []float32, ok bool) {
	b = b[:4*n]
	if !nativeLittleEndian || n == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n), true
}

// nativeLittleEndian reports whether this machine stores a uint32 little-endian.
var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f32Values returns the n float32 values stored in b: b itself when asFloat32s can view it
// so, a decoded copy otherwise (a big-endian machine or misaligned bytes).
func f32Values(b []byte, n int) []float32 {
	if v, ok := asFloat32s(b, n); ok {
		return v
	}
	v := make([]float32, n)
	decodeF32(v, b)
	return v
}
