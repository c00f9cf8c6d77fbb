package gguf

import (
	"errors"
	"fmt"

	"github.com/kvref/kvref/internal/mmapfile"
)

// KV is one metadata key-value pair.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor in a GGUF file.
type TensorInfo struct {
	Name string
	// Dims is in ggml order: Dims[0] is the innermost, contiguous dimension
	// (the row length), so a [rows][cols] matrix has Dims [cols rows].
	Dims   []uint64
	Type   TensorType
	Offset uint64 // byte offset relative to the start of the tensor data section
	Size   uint64 // bytes, computed from Dims and Type
}

// Elements returns the number of elements in the tensor.
func (t *TensorInfo) Elements() uint64 {
	n, _ := product(t.Dims)
	return n
}

// File is a parsed GGUF file. Its metadata and tensor infos are plain
// values; tensor contents are read with TensorData, which slices the
// underlying (usually memory-mapped) file. A File is safe for concurrent
// reads, but Close must not race with other methods.
type File struct {
	Path       string // the path given to Open, or the name given to Parse
	Version    uint32 // 2 or 3
	Alignment  uint64 // tensor data alignment: general.alignment or 32
	Metadata   []KV   // in file order
	Tensors    []TensorInfo
	DataOffset uint64 // absolute offset of the tensor data section

	data        []byte            // the whole file; nil once closed
	mapping     *mmapfile.Mapping // the file's bytes when opened with Open; Close releases them
	kvIndex     map[string]int
	tensorIndex map[string]int
}

// Close releases the file's memory mapping. Slices returned by TensorData
// must not be used afterwards. Close is safe to call more than once.
func (f *File) Close() error {
	f.data = nil
	m := f.mapping
	f.mapping = nil
	return m.Close()
}

// Prefault makes the whole mapped file resident and mapped now (mmapfile.Mapping.Prefault),
// so that the first reads of its tensors take no page faults. A File parsed from bytes in
// memory has nothing to do.
func (f *File) Prefault() { f.mapping.Prefault() }

// Lookup returns the value of a metadata key.
func (f *File) Lookup(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.Metadata[i].Value, true
}

// Architecture returns general.architecture ("llama", ...), or "" if the key
// is missing or not a string.
func (f *File) Architecture() string {
	s, _ := f.String("general.architecture")
	return s
}

// lookup returns the value of key, or an error wrapping ErrKeyNotFound.
func (f *File) lookup(key, want string) (Value, error) {
	v, ok := f.Lookup(key)
	if !ok {
		return Value{}, fmt.Errorf("gguf: %s: metadata key %s (%s) is missing: %w", f.Path, quote(key), want, ErrKeyNotFound)
	}
	return v, nil
}

// typeError reports that key holds a value of the wrong type.
func (f *File) typeError(key, want string, v Value) error {
	return fileErrorf(f.Path, "metadata key %s is %s, want %s", quote(key), v.typeName(), want)
}

// typed returns the value of key as get reads it, or an error that names the file, the
// key and want: the key is missing (wrapping ErrKeyNotFound), or get cannot read its type.
func typed[T any](f *File, key, want string, get func(Value) (T, bool)) (T, error) {
	var zero T
	v, err := f.lookup(key, want)
	if err != nil {
		return zero, err
	}
	x, ok := get(v)
	if !ok {
		return zero, f.typeError(key, want, v)
	}
	return x, nil
}

// String returns a string-valued metadata key.
func (f *File) String(key string) (string, error) { return typed(f, key, "string", Value.Str) }

// Uint returns a metadata key of any integer type that holds a
// non-negative value.
func (f *File) Uint(key string) (uint64, error) {
	const want = "an unsigned integer"
	v, err := f.lookup(key, want)
	if err != nil {
		return 0, err
	}
	if !v.Type.isInteger() {
		return 0, f.typeError(key, want, v)
	}
	u, ok := v.Uint()
	if !ok {
		return 0, fileErrorf(f.Path, "metadata key %s is %s %s, want a non-negative value", quote(key), v.Type, v)
	}
	return u, nil
}

// Float returns a metadata key of float or integer type as a float64.
func (f *File) Float(key string) (float64, error) {
	const want = "a number"
	v, err := f.lookup(key, want)
	if err != nil {
		return 0, err
	}
	if x, ok := v.Float(); ok {
		return x, nil
	}
	if i, ok := v.Int(); ok {
		return float64(i), nil
	}
	if u, ok := v.Uint(); ok {
		return float64(u), nil
	}
	return 0, f.typeError(key, want, v)
}

// Bool returns a bool-valued metadata key.
func (f *File) Bool(key string) (bool, error) { return typed(f, key, "bool", Value.Bool) }

// Strings returns a metadata key holding an array of strings.
func (f *File) Strings(key string) ([]string, error) {
	return typed(f, key, "array of string", Value.Strings)
}

// Float32s returns a metadata key holding an array of float32.
func (f *File) Float32s(key string) ([]float32, error) {
	return typed(f, key, "array of float32", Value.Float32s)
}

// Int32s returns a metadata key holding an array of any integer type,
// converted to int32. It fails if an element does not fit in an int32.
func (f *File) Int32s(key string) ([]int32, error) {
	const want = "array of integers"
	v, err := f.lookup(key, want)
	if err != nil {
		return nil, err
	}
	x, bad, ok := v.int32s()
	if !ok {
		if bad >= 0 {
			return nil, fileErrorf(f.Path, "metadata key %s element %d is %s, which does not fit in an int32",
				quote(key), bad, v.Index(bad))
		}
		return nil, f.typeError(key, want, v)
	}
	return x, nil
}

// Tensor returns the info of the named tensor.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tensorIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// TensorData returns the bytes of tensor t: a slice of the mapped file of
// length t.Size, valid until Close. The caller must not modify it. Its
// start is aligned to f.Alignment relative to the start of the file.
func (f *File) TensorData(t *TensorInfo) ([]byte, error) {
	if f.data == nil {
		return nil, fileErrorf(f.Path, "cannot read tensor %s: %w", quote(t.Name), errClosed)
	}
	size := uint64(len(f.data))
	start := f.DataOffset + t.Offset
	end := start + t.Size
	if start < f.DataOffset || end < start || end > size {
		return nil, fileErrorf(f.Path, "tensor %s needs %d bytes at offset %d in the data section (which starts at %d), file has %d bytes",
			quote(t.Name), t.Size, t.Offset, f.DataOffset, size)
	}
	return f.data[start:end:end], nil
}

var errClosed = errors.New("file is closed")
