package kernels

// dotLegacyGeneric is the definition of the legacy row dots: the row's blocks of
// blockBytes bytes, decoded by decode, against x.
func dotLegacyGeneric(x *Q8Input, row []byte, blockBytes int, decode legacyDecoder) float32 {
	var k legacyBlock
	var acc [16]float32
	for b := 0; b < x.n/QBlockLen; b++ {
		decode(&k, row[b*blockBytes:(b+1)*blockBytes])
		xq := x.qs[b*QBlockLen : (b+1)*QBlockLen : (b+1)*QBlockLen]
		s := k.d * x.d[b]
		lanes := (*[8]float32)(acc[8*(b&1):])
		for l := range lanes {
			p := k.q[4*l]*int32(xq[4*l]) + k.q[4*l+1]*int32(xq[4*l+1]) +
				k.q[4*l+2]*int32(xq[4*l+2]) + k.q[4*l+3]*int32(xq[4*l+3])
			lanes[l] += float32(float32(p) * s)
		}
		if k.hasMin {
			lanes[0] += float32(k.m * x.sLanes[8*b])
		}
	}
	return ReduceLanes(acc[0]+acc[8], acc[1]+acc[9], acc[2]+acc[10], acc[3]+acc[11],
		acc[4]+acc[12], acc[5]+acc[13], acc[6]+acc[14], acc[7]+acc[15])
}

// legacyRowsGeneric is the definition of the legacy *Rows kernels: one row dot per output.
func legacyRowsGeneric(f *legacyFormat, out []float32, x *Q8Input, w []byte, rb int) {
	for r := range out {
		out[r] = dotLegacyGeneric(x, w[r*rb:(r+1)*rb], f.blockBytes, f.decode)
	}
}
