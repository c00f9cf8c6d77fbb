package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Writer builds a GGUF version 3 file. Add metadata and tensors, then call
// WriteTo or WriteFile. The output is deterministic: metadata and tensors
// appear in the order they were added, tensor data is aligned to 32 bytes
// (or to general.alignment, if added), and all padding is zero.
//
// Errors from the Add methods that return nothing (a duplicate key, an
// invalid value) are kept and returned by WriteTo and WriteFile.
type Writer struct {
	kvs     []KV
	keys    map[string]bool
	tensors []writerTensor
	names   map[string]bool
	err     error // first error from an Add method
}

type writerTensor struct {
	info TensorInfo
	data []byte
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{keys: map[string]bool{}, names: map[string]bool{}}
}

func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Add adds a metadata key with any value.
func (w *Writer) Add(key string, v Value) {
	if w.keys[key] {
		w.fail(fmt.Errorf("gguf: writer: metadata key %s added twice", quote(key)))
		return
	}
	if err := checkValue(v, 0); err != nil {
		w.fail(fmt.Errorf("gguf: writer: metadata key %s: %w", quote(key), err))
		return
	}
	if key == "general.alignment" {
		a, ok := v.Uint()
		if !ok || a == 0 || a&(a-1) != 0 || a > maxAlignment {
			w.fail(fmt.Errorf("gguf: writer: general.alignment is %s %s, want a power of two no larger than %d", v.typeName(), v, maxAlignment))
			return
		}
	}
	w.keys[key] = true
	w.kvs = append(w.kvs, KV{Key: key, Value: v})
}

// checkValue checks what the reader will check: known types and bounded
// array nesting.
func checkValue(v Value, depth int) error {
	if !v.Type.valid() {
		return fmt.Errorf("invalid value type %s", v.Type)
	}
	if v.Type != Array {
		return nil
	}
	if depth+1 > maxArrayDepth {
		return fmt.Errorf("arrays nested more than %d deep", maxArrayDepth)
	}
	if !v.ElemType.valid() {
		return fmt.Errorf("invalid array element type %s", v.ElemType)
	}
	if v.ElemType == Array {
		for i := 0; i < v.Len(); i++ {
			if err := checkValue(v.Index(i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddString adds a string metadata key.
func (w *Writer) AddString(key, v string) { w.Add(key, StringValue(v)) }

// AddUint32 adds a uint32 metadata key.
func (w *Writer) AddUint32(key string, v uint32) { w.Add(key, Uint32Value(v)) }

// AddInt32 adds an int32 metadata key.
func (w *Writer) AddInt32(key string, v int32) { w.Add(key, Int32Value(v)) }

// AddUint64 adds a uint64 metadata key.
func (w *Writer) AddUint64(key string, v uint64) { w.Add(key, Uint64Value(v)) }

// AddFloat32 adds a float32 metadata key.
func (w *Writer) AddFloat32(key string, v float32) { w.Add(key, Float32Value(v)) }

// AddBool adds a bool metadata key.
func (w *Writer) AddBool(key string, v bool) { w.Add(key, BoolValue(v)) }

// AddStrings adds an array-of-string metadata key.
func (w *Writer) AddStrings(key string, v []string) { w.Add(key, StringsValue(v)) }

// AddFloat32s adds an array-of-float32 metadata key.
func (w *Writer) AddFloat32s(key string, v []float32) { w.Add(key, Float32sValue(v)) }

// AddInt32s adds an array-of-int32 metadata key.
func (w *Writer) AddInt32s(key string, v []int32) { w.Add(key, Int32sValue(v)) }

// AddTensor adds a tensor. dims are in ggml order (dims[0] is the row
// length). data must hold exactly the tensor's bytes; it is not copied, so
// it must not change before the Writer is written.
func (w *Writer) AddTensor(name string, typ TensorType, dims []uint64, data []byte) error {
	what := "tensor " + quote(name)
	if w.names[name] {
		return fmt.Errorf("gguf: writer: %s added twice", what)
	}
	if len(dims) < 1 || len(dims) > MaxDims {
		return fmt.Errorf("gguf: writer: %s has %d dimensions, want 1 to %d", what, len(dims), MaxDims)
	}
	for i, d := range dims {
		if d == 0 {
			return fmt.Errorf("gguf: writer: %s dimension %d is 0", what, i)
		}
	}
	n, ok := product(dims)
	if !ok {
		return fmt.Errorf("gguf: writer: %s has dimensions %v, whose product overflows", what, dims)
	}
	if bs := uint64(typ.BlockSize()); bs > 0 && dims[0]%bs != 0 {
		return fmt.Errorf("gguf: writer: %s has rows of %d elements, not a multiple of the %s block size %d", what, dims[0], typ, bs)
	}
	size, err := typ.RowBytes(n)
	if err != nil {
		return fmt.Errorf("gguf: writer: %s: %w", what, err)
	}
	if uint64(len(data)) != size {
		return fmt.Errorf("gguf: writer: %s is %s %v and needs %d bytes, got %d", what, typ, dims, size, len(data))
	}
	w.names[name] = true
	info := TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: typ, Size: size}
	w.tensors = append(w.tensors, writerTensor{info: info, data: data})
	return nil
}

// alignment returns the tensor data alignment the file will use.
func (w *Writer) alignment() uint64 {
	for _, kv := range w.kvs {
		if kv.Key == "general.alignment" {
			a, _ := kv.Value.Uint() // checked by Add
			return a
		}
	}
	return DefaultAlignment
}

// WriteTo writes the GGUF file to out and returns the number of bytes
// written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	align := w.alignment()

	// Header, metadata and tensor infos are small; build them in memory.
	var b []byte
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(w.tensors)))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		b = appendString(b, kv.Key)
		b = binary.LittleEndian.AppendUint32(b, uint32(kv.Value.Type))
		b = appendValue(b, kv.Value)
	}
	var off uint64
	for i := range w.tensors {
		t := &w.tensors[i].info
		t.Offset = off
		off = alignUp(off+t.Size, align)
		b = appendString(b, t.Name)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			b = binary.LittleEndian.AppendUint64(b, d)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(t.Type))
		b = binary.LittleEndian.AppendUint64(b, t.Offset)
	}
	b = append(b, make([]byte, alignUp(uint64(len(b)), align)-uint64(len(b)))...)

	n, err := out.Write(b)
	total := int64(n)
	if err != nil {
		return total, err
	}
	zeros := make([]byte, align)
	for _, t := range w.tensors {
		n, err := out.Write(t.data)
		total += int64(n)
		if err != nil {
			return total, err
		}
		pad := alignUp(t.info.Size, align) - t.info.Size
		n, err = out.Write(zeros[:pad])
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// appendString appends a GGUF string: u64 length, then the bytes.
func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue appends the encoding of v (without its type id).
func appendValue(b []byte, v Value) []byte {
	switch v.Type {
	case String:
		return appendString(b, v.str)
	case Array:
		b = binary.LittleEndian.AppendUint32(b, uint32(v.ElemType))
		b = binary.LittleEndian.AppendUint64(b, uint64(v.Len()))
		if v.Len() == 0 {
			return b
		}
		switch v.ElemType {
		case String:
			for _, s := range v.arr.strs {
				b = appendString(b, s)
			}
		case Array:
			for _, e := range v.arr.vals {
				b = appendValue(b, e)
			}
		default:
			b = append(b, v.str...)
		}
		return b
	}
	return encodeScalar(b, v)
}

// WriteFile writes the GGUF file to path atomically: it writes a temporary
// file in the same directory and renames it into place.
func (w *Writer) WriteFile(path string) (err error) {
	if w.err != nil {
		return w.err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if _, err = w.WriteTo(bw); err != nil {
		return fmt.Errorf("gguf: writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("gguf: writing %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("gguf: writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("gguf: writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}
