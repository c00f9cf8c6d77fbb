//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package safetensors

import (
	"errors"
	"os"
)

// mmapFile always fails here, so Open falls back to reading the file.
func mmapFile(*os.File, int) ([]byte, error) {
	return nil, errors.New("memory mapping is not supported on this platform")
}

// unmap is never called on this platform, since nothing is mapped.
func unmap([]byte) error { return nil }
