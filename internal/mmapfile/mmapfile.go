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
	"runtime"
	"sync"
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

// Prefault makes every page of a mapping resident and mapped before it is first read, as
// llama.cpp's model loader does (MAP_POPULATE and madvise(MADV_WILLNEED)): the first
// forward pass then reads the weights at memory speed, instead of taking a page fault,
// and perhaps a disk read, for each page it touches first. It returns when the pages are
// in (on Linux: madvise(MADV_POPULATE_READ)). For bytes that were read rather than
// mapped it does nothing.
func (m *Mapping) Prefault() {
	if m == nil || !m.mapped || len(m.Data) == 0 {
		return
	}
	prefault(m.Data)
}

// touchPages reads one byte of every page of data, the pages split among the processors.
func touchPages(data []byte) {
	page := os.Getpagesize()
	pages := (len(data) + page - 1) / page
	workers := min(runtime.GOMAXPROCS(0), max(1, pages/256))
	var wg sync.WaitGroup
	sums := make([]byte, workers)
	for w := range workers {
		wg.Go(func() {
			var s byte
			for p := w; p < pages; p += workers {
				s += data[p*page]
			}
			sums[w] = s
		})
	}
	wg.Wait()
	// The sums are kept alive to the end, so that the reads cannot be optimised away.
	runtime.KeepAlive(sums)
}

// Close releases the mapping. A nil *Mapping has nothing to release.
func (m *Mapping) Close() error {
	if m == nil {
		return nil
	}
	data, mapped := m.Data, m.mapped
	m.Data, m.mapped = nil, false
	if mapped && data != nil {
		return munmap(data)
	}
	return nil
}

// OpenParsed opens the file at path as Open does and parses its bytes with parse, which
// is given the path and the bytes: the Open of every file-format reader. An error opening
// the file is returned prefixed with "prefix: "; on a parse error the bytes are released
// and parse's error is returned as it is. The caller owns the returned Mapping and closes
// it when it is done with the parsed value, whose slices may point into the bytes.
func OpenParsed[T any](path, prefix string, parse func(path string, data []byte) (T, error)) (T, *Mapping, error) {
	var zero T
	m, err := Open(path)
	if err != nil {
		return zero, nil, fmt.Errorf("%s: %w", prefix, err)
	}
	v, err := parse(path, m.Data)
	if err != nil {
		m.Close()
		return zero, nil, err
	}
	return v, m, nil
}
