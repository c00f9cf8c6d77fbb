//go:build !amd64 || purego

package kernels

// PeakLoops reports the register-only loops this build has for measuring the machine's
// arithmetic peak. The portable build has none: its arithmetic peak is that of scalar Go.
func PeakLoops() (fma, mulAdd func(iters int), fmaFlops, mulAddFlops, bits int) {
	return nil, nil, 192, 96, 0
}
