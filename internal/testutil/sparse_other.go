//go:build !unix

package testutil

// zeroMapping returns n zero bytes: where there is no anonymous mapping to ask for, an
// ordinary slice (which the garbage collector may leave unpaged until it is read).
func zeroMapping(n int) ([]byte, error) { return make([]byte, n), nil }

// unmapZeros releases zeroMapping's bytes: nothing to do for a slice.
func unmapZeros([]byte) error { return nil }
