package quant

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/kvref/kvref/internal/kernels"
)

// The f32 cache type stores each value as its float32 bits, little-endian: 4 bytes per
// value, no rounding at all.

func encodeF32(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func decodeF32(dst []float32, src []byte) {
	n := len(dst)
	if v, ok := asFloat32s(src, n); ok { // the bytes are the values: a plain copy
		copy(dst, v)
		return
	}
	src = src[:4*n]
	i := 0
	for ; i+8 <= n; i += 8 { // whole groups of 8: one bounds check per group
		ds := dst[i : i+8 : i+8]
		bs := src[4*i : 4*i+32 : 4*i+32]
		for j := range ds {
			ds[j] = f32At(bs, j)
		}
	}
	for ; i < n; i++ {
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

// dotF32 is kernels.Dot(q, decoded head) on the head's bytes b, in the same lane order: on
// a little-endian machine the bytes are the values, so it is kernels.Dot itself.
func dotF32(q []float32, b []byte) float32 {
	n := len(q)
	if v, ok := asFloat32s(b, n); ok {
		return kernels.Dot(q, v)
	}
	b = b[:4*n]
	var l0, l1, l2, l3, l4, l5, l6, l7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qs := q[i : i+8 : i+8]
		bs := b[4*i : 4*i+32 : 4*i+32]
		l0 += float32(qs[0] * f32At(bs, 0))
		l1 += float32(qs[1] * f32At(bs, 1))
		l2 += float32(qs[2] * f32At(bs, 2))
		l3 += float32(qs[3] * f32At(bs, 3))
		l4 += float32(qs[4] * f32At(bs, 4))
		l5 += float32(qs[5] * f32At(bs, 5))
		l6 += float32(qs[6] * f32At(bs, 6))
		l7 += float32(qs[7] * f32At(bs, 7))
	}
	var tail [8]float32
	for j := 0; i+j < n; j++ {
		tail[j] = float32(q[i+j] * f32At(b, i+j))
	}
	return kernels.ReduceLanes(l0+tail[0], l1+tail[1], l2+tail[2], l3+tail[3],
		l4+tail[4], l5+tail[5], l6+tail[6], l7+tail[7])
}

// axpyF32 is kernels.Axpy(dst, a, decoded head) on the head's bytes b.
func axpyF32(dst []float32, a float32, b []byte) {
	n := len(dst)
	if v, ok := asFloat32s(b, n); ok {
		kernels.Axpy(dst, a, v)
		return
	}
	b = b[:4*n]
	i := 0
	for ; i+8 <= n; i += 8 { // whole groups of 8: one bounds check per group
		ds := dst[i : i+8 : i+8]
		bs := b[4*i : 4*i+32 : 4*i+32]
		for j := range ds {
			ds[j] += float32(a * f32At(bs, j))
		}
	}
	for ; i < n; i++ {
		dst[i] += float32(a * f32At(b, i))
	}
}
