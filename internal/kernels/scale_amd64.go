//go:build amd64 && !purego

package kernels

import "unsafe"

// scaleAVXAsm multiplies the n floats at x by s, 32 then 8 at a time (VMULPS); n is a
// positive multiple of 8. Implemented in scale_amd64.s.
//
//go:noescape
func scaleAVXAsm(x *float32, s float32, n int)

// maxLanesAVXAsm folds the n floats at x (a positive multiple of 8) into eight lanes that
// start as x[0]: lane j = max(lane j, x[8i+j]) with VMAXPS's rule (the lane is kept when
// the element is NaN or equal), which is maxGeneric's step. Implemented in scale_amd64.s.
//
//go:noescape
func maxLanesAVXAsm(lanes *[8]float32, x *float32, n int)

func scale(x []float32, s float32) {
	n8 := len(x) &^ 7
	if !implScaleAVX.on || n8 == 0 {
		scaleGeneric(x, s)
		return
	}
	scaleAVXAsm(unsafe.SliceData(x), s, n8)
	scaleGeneric(x[n8:], s)
}

// maxOf is maxGeneric: the lanes, then the lanes and the elements after the last group of
// eight folded with maxGeneric's step. The lanes all start as x[0], so a NaN there stays
// (as in maxGeneric); otherwise no lane is NaN, and the maximum of the lanes is the
// maximum of the elements, except that of a +0 and a -0 either may come out, where
// maxGeneric keeps the first. Softmax subtracts it: x - (+0) and x - (-0) differ only for x
// = -0, and exp of either zero is 1, so its results do not change.
func maxOf(x []float32) float32 {
	n8 := len(x) &^ 7
	if !implScaleAVX.on || n8 == 0 {
		return maxGeneric(x)
	}
	var lanes [8]float32
	maxLanesAVXAsm(&lanes, unsafe.SliceData(x), n8)
	return maxFold(maxFold(lanes[0], lanes[1:]), x[n8:])
}
