//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mmapfile

import (
	"errors"
	"os"
)

// mmap always fails here, so Open falls back to reading the file.
func mmap(*os.File, int) ([]byte, error) {
	return nil, errors.New("memory mapping is not supported on this platform")
}

// munmap is never called on this platform, since nothing is mapped.
func munmap([]byte) error { return nil }
