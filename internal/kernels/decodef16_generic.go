package kernels

import "github.com/kvref/kvref/internal/half"

// decodeF16Generic is DecodeF16 in portable Go.
func decodeF16Generic(dst []float32, src []byte) {
	table := half.F16Table
	for i := range dst {
		dst[i] = table[le16(src[2*i:])]
	}
}

// encodeF16Generic is EncodeF16 in portable Go.
func encodeF16Generic(dst []byte, src []float32) {
	for i, v := range src {
		h := half.F32ToF16(v)
		dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
	}
}
