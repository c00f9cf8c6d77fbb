//go:build !amd64 || purego

package probe

// PeakLoops reports the register-only loops this build has for measuring the machine's
// arithmetic peak. The portable build has none: its arithmetic peak is that of scalar Go.
func PeakLoops() (fma, mulAdd func(iters int), fmaFlops, mulAddFlops, bits int) {
	return nil, nil, 192, 96, 0
}

// StreamRead reads every element of x and returns a value that depends on all of them
// (their sum, in no promised order), so that the read cannot be optimised away: the
// memory-bandwidth probe of kvref bench --roofline, not a numeric kernel. In this build it
// is portable Go with eight independent accumulators.
func StreamRead(x []float32) float32 { return streamReadGeneric(x) }

// Int8PeakLoop reports the register-only loop this build has for measuring the machine's
// peak rate of int8 multiply-adds. The portable build has none.
func Int8PeakLoop() (loop func(iters int), ops int, what string) { return nil, 0, "" }
