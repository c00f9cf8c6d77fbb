package kernels

import "github.com/kvref/kvref/internal/half"

// decodeF16Generic is DecodeF16 in portable Go.
func decodeF16Generic(dst []float32, src []byte) {
	table := half.F16Table
	for i := range dst {
		dst[i] = table[le16(src[2*i:])]
	}
}
