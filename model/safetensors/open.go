package safetensors

import (
	"fmt"
	"io"
	"os"
)

// Open opens and parses the safetensors file at path. On Unix it maps the file
// into memory read-only, so no copy of the tensor data is made; where mapping
// is unavailable or fails it reads the whole file instead. Call Close when done.
//
// As with any memory mapping, truncating the file on disk while it is open
// makes later reads of its tensor data crash the process.
func Open(path string) (*File, error) {
	osf, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer osf.Close()
	st, err := osf.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	size := st.Size()
	if size < 0 || int64(int(size)) != size {
		return nil, fileErrorf(path, "file is %d bytes, too large to address on this platform", size)
	}
	data, err := mmapFile(osf, int(size))
	mapped := err == nil
	if !mapped {
		data = make([]byte, size)
		if _, err := io.ReadFull(osf, data); err != nil {
			return nil, fileErrorf(path, "reading: %v", err)
		}
	}
	f, err := Parse(path, data)
	if err != nil {
		if mapped {
			_ = unmap(data)
		}
		return nil, err
	}
	f.mapped = mapped
	return f, nil
}
