//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package llama2c

import (
	"errors"
	"os"
	"syscall"
)

// mmapFile maps size bytes of f read-only and shared.
func mmapFile(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return nil, errors.New("cannot map an empty file")
	}
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

// unmap releases a mapping made by mmapFile.
func unmap(data []byte) error {
	return syscall.Munmap(data)
}
