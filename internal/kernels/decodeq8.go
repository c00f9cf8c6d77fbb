package kernels

import (
	"fmt"

	"github.com/kvref/kvref/internal/half"
)

// DecodeQ8_0Strided decodes len(dst)/(32·nb) rows of nb ggml Q8_0 blocks each (a
// little-endian fp16 scale d, then 32 int8 values q: Q8_0BlockBytes bytes a block), the rows
// stride bytes apart in src, to float32 q·d as ggml's dequantize_row_q8_0 computes it
// (float32(q) times float32(d), one rounded multiply), row i at dst[i·32·nb:]: one head of
// the consecutive slots of a q8_0 cache block. On amd64 with AVX2 and F16C it decodes
// eight values per instruction, the same bits. It panics if nb < 1, len(dst) is not a
// multiple of 32·nb, stride < 34·nb or src ends before the last row. next is
// DecodeF16Strided's hint: the rows read after these, asked for meanwhile.
func DecodeQ8_0Strided(dst []float32, src []byte, nb, stride int, next []byte) {
	if nb < 1 || len(dst)%(QBlockLen*nb) != 0 {
		panic(fmt.Sprintf("kernels: DecodeQ8_0Strided: %d values are not a whole number of rows of %d blocks of %d", len(dst), nb, QBlockLen))
	}
	rows := len(dst) / (QBlockLen * nb)
	span := stridedSpan("DecodeQ8_0Strided", "bytes", rows, Q8_0BlockBytes*nb, stride, len(src))
	if rows == 0 {
		return
	}
	decodeQ8_0Strided(dst, src[:span], nb, stride, next)
}

// decodeQ8_0StridedGeneric is the portable definition of DecodeQ8_0Strided.
func decodeQ8_0StridedGeneric(dst []float32, src []byte, nb, stride int) {
	for i := range len(dst) / (QBlockLen * nb) {
		row := src[i*stride : i*stride+Q8_0BlockBytes*nb]
		for k := range nb {
			blk := row[k*Q8_0BlockBytes : (k+1)*Q8_0BlockBytes]
			d := half.F16Table[le16(blk)]
			out := dst[(i*nb+k)*QBlockLen : (i*nb+k+1)*QBlockLen]
			for j, b := range blk[2:] {
				out[j] = float32(int8(b)) * d
			}
		}
	}
}
