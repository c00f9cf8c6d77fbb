package gguf

import "github.com/kvref/kvref/internal/mmapfile"

// Open opens and parses the GGUF file at path. On Unix it maps the file into
// memory read-only, so no copy of the tensor data is made; where mapping is
// unavailable or fails it reads the whole file instead. Call Close when done.
//
// As with any memory mapping, truncating the file on disk while it is open
// makes later reads of its tensor data crash the process.
func Open(path string) (*File, error) {
	f, m, err := mmapfile.OpenParsed(path, "gguf", Parse)
	if err == nil {
		f.mapping = m
	}
	return f, err
}
