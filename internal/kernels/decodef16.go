package kernels

// DecodeF16 widens the len(dst) IEEE 754 binary16 values stored little-endian in src to
// float32 (exactly: every half is a float32, subnormals and NaN payloads included). On
// amd64 with F16C it converts eight at a time with VCVTPH2PS. It panics if
// len(src) < 2·len(dst).
func DecodeF16(dst []float32, src []byte) {
	decodeF16(dst, src[:2*len(dst)])
}

// EncodeF16 rounds the len(src) float32 values to IEEE 754 binary16, to nearest with ties
// to even (half.F32ToF16: overflow to infinity, subnormal halves, NaNs quiet with their
// payload's top bits), and stores them little-endian in dst. On amd64 with F16C it converts
// eight at a time with VCVTPS2PH, the same bits. It panics if len(dst) < 2·len(src).
func EncodeF16(dst []byte, src []float32) {
	encodeF16(dst[:2*len(src)], src)
}
