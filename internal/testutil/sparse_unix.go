//go:build unix

package testutil

import "golang.org/x/sys/unix"

// zeroMapping returns n zero bytes that take no memory: a read-only anonymous mapping,
// every page the kernel's zero page.
func zeroMapping(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANON)
}

// unmapZeros releases zeroMapping's bytes.
func unmapZeros(b []byte) error { return unix.Munmap(b) }
