package kernels

import (
	"encoding/binary"
	"math"
)

// quantizeQ8KGeneric is the definition of Quantize's work, super-block by super-block (v
// already sized for x).
func quantizeQ8KGeneric(v *Q8KInput, x []float32) {
	for b := 0; b < len(x)/KBlockLen; b++ {
		xs := x[b*KBlockLen : (b+1)*KBlockLen : (b+1)*KBlockLen]
		blk := v.block(b)
		var amax, extreme float32
		for _, f := range xs {
			if a := math.Float32frombits(math.Float32bits(f) &^ (1 << 31)); a > amax {
				amax, extreme = a, f
			}
		}
		if amax == 0 {
			clear(blk)
			continue
		}
		iscale := -127 / extreme
		for j, f := range xs {
			blk[j] = uint8(min(127, ggmlNearestInt(float32(iscale*f))))
		}
		for j := range KBlockLen / kSubLen16 {
			var s int16
			for _, q := range blk[kSubLen16*j : kSubLen16*(j+1)] {
				s += int16(int8(q))
			}
			binary.LittleEndian.PutUint16(blk[q8KSumsOffset+2*j:], uint16(s))
		}
		binary.LittleEndian.PutUint32(blk[q8KDOffset:], math.Float32bits(1/iscale))
	}
}
