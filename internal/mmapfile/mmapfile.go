// Package mmapfile gives the model readers a file's bytes without copying them: the file is
// mapped into memory read-only where the platform allows, and read whole otherwise.
//
// As with any memory mapping, truncating the file on disk while it is mapped makes later
// reads of its bytes crash the process.
package mmapfile

import (
	"fmt"
	"io"
	"os"
)

// Mapping holds a file's bytes. Close releases them; it is safe to call more than once.
type Mapping struct {
	Data   []byte
	mapped bool // Data is a memory mapping that Close must release
}

// Open maps the file at path, or reads it where mapping is unavailable or fails.
func Open(path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("%s: file is %d bytes, too large to address on this platform", path, size)
	}
	if data, err := mmap(f, int(size)); err == nil {
		return &Mapping{Data: data, mapped: true}, nil
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("%s: reading: %w", path, err)
	}
	return &Mapping{Data: data}, nil
}

// Mapped reports whether the bytes are a memory mapping (rather than a copy).
func (m *Mapping) Mapped() bool { return m.mapped }

// Close releases the mapping.
func (m *Mapping) Close() error {
	data, mapped := m.Data, m.mapped
	m.Data, m.mapped = nil, false
	if mapped && data != nil {
		return munmap(data)
	}
	return nil
}
