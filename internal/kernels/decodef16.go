package kernels

// DecodeF16 widens the len(dst) IEEE 754 binary16 values stored little-endian in src to
// float32 (exactly: every half is a float32, subnormals and NaN payloads included). On
// amd64 with F16C it converts eight at a time with VCVTPH2PS. It panics if
// len(src) < 2·len(dst).
func DecodeF16(dst []float32, src []byte) {
	decodeF16(dst, src[:2*len(dst)])
}
