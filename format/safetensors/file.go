package safetensors

import (
	"math/bits"

	"github.com/kvref/kvref/internal/mmapfile"
)

// TensorInfo describes one tensor of a safetensors file.
type TensorInfo struct {
	Name  string
	DType DType
	// Shape is outermost first (row-major): a matrix of rows × cols elements
	// has Shape [rows, cols]. A scalar has an empty shape.
	Shape []int
	// Begin and End are the tensor's byte range [Begin, End) in the data
	// buffer, which starts at File.DataOffset (the header's data_offsets).
	Begin, End uint64
}

// Size is the tensor's size in bytes.
func (t *TensorInfo) Size() uint64 { return t.End - t.Begin }

// Elements is the number of elements, the product of the shape.
func (t *TensorInfo) Elements() uint64 {
	n, _ := elements(t.Shape)
	return n
}

// elements multiplies the dimensions of shape, reporting overflow of uint64.
func elements(shape []int) (uint64, bool) {
	n := uint64(1)
	for _, d := range shape {
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 {
			return 0, false
		}
		n = lo
	}
	return n, true
}

// File is a parsed safetensors file. Its header is plain values; tensor
// contents are read with TensorData, which slices the underlying (usually
// memory-mapped) file. A File is safe for concurrent reads, but Close must not
// race with other methods.
type File struct {
	Path       string            // the path given to Open, or the name given to Parse
	Metadata   map[string]string // the header's __metadata__; nil when absent
	Tensors    []TensorInfo      // sorted by name
	DataOffset int64             // absolute offset of the data buffer: 8 + the header length

	data    []byte            // the whole file; nil once closed
	mapping *mmapfile.Mapping // the file's bytes when opened with Open; Close releases them
	index   map[string]int
}

// Tensor returns the info of the named tensor.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.index[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// TensorData returns the bytes of the named tensor: a slice of the mapped file,
// valid until Close. The caller must not modify it.
func (f *File) TensorData(name string) ([]byte, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fileErrorf(f.Path, "no tensor %s: %w", quote(name), ErrNotFound)
	}
	return f.tensorData(t)
}

// tensorData slices the bytes of t, which was checked to lie inside the file.
func (f *File) tensorData(t *TensorInfo) ([]byte, error) {
	if f.data == nil {
		return nil, fileErrorf(f.Path, "cannot read tensor %s: %w", quote(t.Name), errClosed)
	}
	start, end := uint64(f.DataOffset)+t.Begin, uint64(f.DataOffset)+t.End
	return f.data[start:end:end], nil
}

// Close releases the file's memory mapping. Slices returned by TensorData
// must not be used afterwards. Close is safe to call more than once.
func (f *File) Close() error {
	f.data = nil
	m := f.mapping
	f.mapping = nil
	return m.Close()
}
