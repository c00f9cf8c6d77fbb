//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mmapfile

import (
	"errors"
	"os"
	"syscall"
)

// mmap maps size bytes of f read-only and shared.
func mmap(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return nil, errors.New("cannot map an empty file")
	}
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

// munmap releases a mapping made by mmap.
func munmap(data []byte) error { return syscall.Munmap(data) }
