//go:build amd64 && !purego

package kernels

import "unsafe"

// dotAVXAsm returns the dot product of the n floats at x and y in Dot's order: one YMM
// accumulator holds the eight lanes, VMULPS then VADDPS per eight elements, the last n%8
// elements loaded with VMASKMOVPS (zero in the other lanes, nothing read past the end),
// then the horizontal sum ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)). Implemented in
// dot_avx_amd64.s.
//
//go:noescape
func dotAVXAsm(x, y *float32, n int) float32

// dotAVX is dotGeneric computed by dotAVXAsm. y must be at least as long as x.
func dotAVX(x, y []float32) float32 {
	y = y[:len(x)]
	return dotAVXAsm(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
}

func dot(x, y []float32) float32 {
	if implDotAVX.on {
		return dotAVX(x, y)
	}
	return dotGeneric(x, y)
}
