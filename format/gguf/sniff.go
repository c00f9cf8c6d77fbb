package gguf

import (
	"io"
	"os"
)

// IsFile reports whether the file at path starts with the GGUF magic. The error is the
// one of opening it; a file too short to hold the magic is not GGUF.
func IsFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	magic := make([]byte, len(Magic))
	if _, err := io.ReadFull(f, magic); err != nil {
		return false, nil
	}
	return string(magic) == Magic, nil
}
