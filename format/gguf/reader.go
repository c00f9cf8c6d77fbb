package gguf

import (
	"math"
	"math/bits"
)

const (
	// Magic is the four bytes every GGUF file starts with.
	Magic = "GGUF"
	// DefaultAlignment is the tensor data alignment when a file has no
	// general.alignment key.
	DefaultAlignment = 32
	// MaxDims is the largest number of tensor dimensions ggml supports.
	MaxDims = 4

	// maxAlignment bounds general.alignment: larger values only serve to
	// make a hostile file's padding absurd.
	maxAlignment = 1 << 20
	// maxArrayDepth bounds how deeply metadata arrays may nest.
	maxArrayDepth = 8
	// maxNestedArrays bounds the number of arrays inside arrays in one file.
	maxNestedArrays = 1 << 20
	// minKVSize is the fewest bytes one metadata pair takes: key length,
	// value type and a one-byte value.
	minKVSize = 8 + 4 + 1
	// minTensorInfoSize is the fewest bytes one tensor info takes: name
	// length, dimension count, one dimension, type and offset.
	minTensorInfoSize = 8 + 4 + 8 + 4 + 8
)

// Parse parses a GGUF file held in memory. name identifies the file in error
// messages and becomes File.Path. The File refers to data for tensor
// contents (TensorData), so data must not change while the File is in use;
// metadata is copied.
//
// Parse treats data as untrusted: it never panics, checks every count and
// length against the bytes that remain before allocating for it (so however
// the input is crafted, it allocates at most about ten times len(data)), and
// checks that every tensor lies inside data.
func Parse(name string, data []byte) (*File, error) {
	d := &decoder{name: name, data: data}
	f := &File{Path: name, data: data, Alignment: DefaultAlignment}

	nTensors, nKV, err := f.readHeader(d)
	if err != nil {
		return nil, err
	}
	if err := f.readMetadata(d, nKV); err != nil {
		return nil, err
	}
	if err := f.readAlignment(); err != nil {
		return nil, err
	}
	if err := f.readTensorInfos(d, nTensors); err != nil {
		return nil, err
	}
	f.DataOffset = alignUp(d.off, f.Alignment)
	if err := f.checkTensorBounds(); err != nil {
		return nil, err
	}
	return f, nil
}

// readHeader reads the magic, version and the two counts, and checks the
// counts against the bytes that follow.
func (f *File) readHeader(d *decoder) (nTensors, nKV uint64, err error) {
	if len(d.data) < len(Magic) {
		return 0, 0, fileErrorf(d.name, "file is %d bytes, too short for a GGUF header: %w", len(d.data), ErrTruncated)
	}
	m, _ := d.take(4, plain("magic"))
	if string(m) != Magic {
		return 0, 0, fileErrorf(d.name, "bad magic %q, want %q: %s", m, Magic, magicHint(m))
	}
	if f.Version, err = d.u32(plain("version")); err != nil {
		return 0, 0, err
	}
	if err := checkVersion(d.name, f.Version); err != nil {
		return 0, 0, err
	}
	if nTensors, err = d.u64(plain("tensor count")); err != nil {
		return 0, 0, err
	}
	if nKV, err = d.u64(plain("metadata count")); err != nil {
		return 0, 0, err
	}
	if nKV > d.remaining()/minKVSize {
		return 0, 0, fileErrorf(d.name, "metadata count %d is impossible: each pair takes at least %d bytes and only %d are left: %w",
			nKV, minKVSize, d.remaining(), ErrTruncated)
	}
	if nTensors > (d.remaining()-nKV*minKVSize)/minTensorInfoSize {
		return 0, 0, fileErrorf(d.name, "tensor count %d is impossible: each tensor info takes at least %d bytes and only %d are left after the metadata: %w",
			nTensors, minTensorInfoSize, d.remaining()-nKV*minKVSize, ErrTruncated)
	}
	return nTensors, nKV, nil
}

// magicHint says what a file with the wrong magic might be.
func magicHint(m []byte) string {
	switch string(m) {
	case "lmgg", "fmgg", "tjgg": // "ggml", "ggmf", "ggjt" stored as little-endian uint32
		return "this is a legacy GGML/GGMF/GGJT model; convert it to GGUF with llama.cpp's conversion scripts"
	}
	return "not a GGUF file"
}

func checkVersion(name string, v uint32) error {
	switch {
	case v == 2 || v == 3:
		return nil
	case v == 1:
		return fileErrorf(name, "GGUF version 1 is not supported (only versions 2 and 3); re-convert the model with a current llama.cpp")
	case bits.ReverseBytes32(v) >= 1 && bits.ReverseBytes32(v) <= 3:
		return fileErrorf(name, "GGUF version field is %#x, which is version %d byte-swapped: big-endian GGUF files are not supported",
			v, bits.ReverseBytes32(v))
	}
	return fileErrorf(name, "unsupported GGUF version %d, want 2 or 3", v)
}

// readMetadata reads nKV key-value pairs into f.Metadata.
func (f *File) readMetadata(d *decoder, nKV uint64) (err error) {
	f.Metadata, f.kvIndex, err = readNamed(d, nKV, "key of metadata pair", "metadata key", "pairs",
		func(key string, w what) (KV, error) {
			t, err := d.u32(w.with("value type"))
			if err != nil {
				return KV{}, err
			}
			v, err := d.value(ValueType(t), w)
			return KV{Key: key, Value: v}, err
		})
	return err
}

// value reads one metadata value of type t.
func (d *decoder) value(t ValueType, w what) (Value, error) {
	switch {
	case !t.valid():
		return Value{}, fileErrorf(d.name, "%s has unknown value type %d at offset %d (GGUF defines 0 to %d)",
			w, uint32(t), d.off-4, uint32(Float64))
	case t == String:
		s, err := d.str(w)
		return StringValue(s), err
	case t == Array:
		return d.array(w, 1)
	}
	b, err := d.take(uint64(t.fixedSize()), w)
	if err != nil {
		return Value{}, err
	}
	if t == Bool && b[0] > 1 {
		return Value{}, fileErrorf(d.name, "%s is a bool with byte value %d at offset %d, want 0 or 1", w, b[0], d.off-1)
	}
	return decodeScalar(t, b), nil
}

// array reads an array's element type, count and elements. depth is 1 for
// a top-level array; w describes the metadata key the array belongs to.
func (d *decoder) array(w what, depth int) (Value, error) {
	if depth > maxArrayDepth {
		return Value{}, fileErrorf(d.name, "%s nests arrays more than %d deep", w, maxArrayDepth)
	}
	et, err := d.u32(w.with("array element type"))
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.valid() {
		return Value{}, fileErrorf(d.name, "%s is an array of unknown value type %d at offset %d (GGUF defines 0 to %d)",
			w, et, d.off-4, uint32(Float64))
	}
	n, err := d.u64(w.with("array length"))
	if err != nil {
		return Value{}, err
	}
	if n > d.remaining()/elem.minSize() {
		return Value{}, fileErrorf(d.name, "%s is an array of %d %s values, which needs at least %d bytes each, but only %d bytes are left: %w",
			w, n, elem, elem.minSize(), d.remaining(), ErrTruncated)
	}
	if n == 0 {
		return Value{Type: Array, ElemType: elem}, nil
	}
	v := Value{Type: Array, ElemType: elem}
	elemWhat := w.with("array element")
	switch elem {
	case String:
		strs := make([]string, n)
		for i := range strs {
			if strs[i], err = d.str(elemWhat); err != nil {
				return Value{}, err
			}
		}
		v.arr = &arrayData{strs: strs}
	case Array:
		// A nested array costs several times its 12 bytes in the file,
		// so their total is bounded.
		if d.nestedArrays += n; d.nestedArrays > maxNestedArrays {
			return Value{}, fileErrorf(d.name, "%s: the file holds more than %d nested arrays", w, maxNestedArrays)
		}
		vals := make([]Value, n)
		for i := range vals {
			if vals[i], err = d.array(w, depth+1); err != nil {
				return Value{}, err
			}
		}
		v.arr = &arrayData{vals: vals}
	default:
		b, _ := d.take(n*uint64(elem.fixedSize()), elemWhat) // length checked above
		if elem == Bool {
			for i, x := range b {
				if x > 1 {
					return Value{}, fileErrorf(d.name, "%s %d is a bool with byte value %d, want 0 or 1", elemWhat, i, x)
				}
			}
		}
		v.str = string(b) // a copy, valid after the file is unmapped
	}
	return v, nil
}

// readAlignment applies general.alignment if the file sets it.
func (f *File) readAlignment() error {
	v, ok := f.Lookup("general.alignment")
	if !ok {
		return nil
	}
	a, ok := v.Uint()
	if !ok {
		return fileErrorf(f.Path, "metadata key \"general.alignment\" is %s %s, want an unsigned integer", v.typeName(), v)
	}
	if a == 0 || a&(a-1) != 0 || a > maxAlignment {
		return fileErrorf(f.Path, "metadata key \"general.alignment\" is %d, want a power of two no larger than %d", a, maxAlignment)
	}
	f.Alignment = a
	return nil
}

// readNamed reads a section of n entries, each a name that no earlier entry has (field:
// "name of tensor", ...; named as thing, "tensor", and both entries with plural) followed by
// what readEntry reads, and returns them with the index of each name.
func readNamed[T any](d *decoder, n uint64, field, thing, plural string, readEntry func(name string, w what) (T, error)) ([]T, map[string]int, error) {
	entries, index := make([]T, 0, n), make(map[string]int, n)
	for i := uint64(0); i < n; i++ {
		name, err := d.str(indexed(field, i))
		if err != nil {
			return nil, nil, err
		}
		if j, dup := index[name]; dup {
			return nil, nil, fileErrorf(d.name, "%s appears twice (%s %d and %d); the file is corrupt", named(thing, name), plural, j, i)
		}
		e, err := readEntry(name, named(thing, name))
		if err != nil {
			return nil, nil, err
		}
		index[name] = len(entries)
		entries = append(entries, e)
	}
	return entries, index, nil
}

// readTensorInfos reads and validates nTensors tensor infos. Bounds against
// the file size are checked later, once the data offset is known.
func (f *File) readTensorInfos(d *decoder, nTensors uint64) (err error) {
	f.Tensors, f.tensorIndex, err = readNamed(d, nTensors, "name of tensor", "tensor", "tensors",
		func(name string, w what) (TensorInfo, error) { return f.readTensorInfo(d, name, w) })
	return err
}

func (f *File) readTensorInfo(d *decoder, name string, w what) (TensorInfo, error) {
	t := TensorInfo{Name: name}
	nd, err := d.u32(w.with("dimension count"))
	if err != nil {
		return t, err
	}
	if nd < 1 || nd > MaxDims {
		return t, fileErrorf(d.name, "%s has %d dimensions, want 1 to %d", w, nd, MaxDims)
	}
	t.Dims = make([]uint64, nd)
	for j := range t.Dims {
		if t.Dims[j], err = d.u64(w.with("dimension")); err != nil {
			return t, err
		}
		if t.Dims[j] == 0 || t.Dims[j] > math.MaxInt64 {
			return t, fileErrorf(d.name, "%s dimension %d is %d, want 1 to %d", w, j, t.Dims[j], int64(math.MaxInt64))
		}
	}
	typ, err := d.u32(w.with("type"))
	if err != nil {
		return t, err
	}
	t.Type = TensorType(typ)
	if t.Offset, err = d.u64(w.with("offset")); err != nil {
		return t, err
	}

	n, ok := product(t.Dims)
	if !ok {
		return t, fileErrorf(d.name, "%s has dimensions %v, whose product overflows", w, t.Dims)
	}
	if !t.Type.Known() {
		if _, named := t.Type.layout(); named {
			return t, fileErrorf(d.name, "%s has type %s (id %d), which ggml no longer supports in GGUF files; re-convert the model with a current llama.cpp",
				w, t.Type, typ)
		}
		return t, fileErrorf(d.name, "%s has unknown tensor type id %d (known ids are 0 to %d); the file is corrupt or needs a newer reader",
			w, typ, len(tensorLayouts)-1)
	}
	if bs := uint64(t.Type.BlockSize()); t.Dims[0]%bs != 0 {
		return t, fileErrorf(d.name, "%s has rows of %d elements, not a multiple of the %s block size %d",
			w, t.Dims[0], t.Type, bs)
	}
	if t.Size, err = t.Type.RowBytes(n); err != nil {
		return t, fileErrorf(d.name, "%s: %v", w, err)
	}
	if t.Offset%f.Alignment != 0 {
		return t, fileErrorf(d.name, "%s has data offset %d, which is not a multiple of the alignment %d",
			w, t.Offset, f.Alignment)
	}
	if t.Offset+t.Size < t.Offset {
		return t, fileErrorf(d.name, "%s has data offset %d and size %d, whose sum overflows", w, t.Offset, t.Size)
	}
	return t, nil
}

// checkTensorBounds checks that every tensor's bytes lie inside the file.
func (f *File) checkTensorBounds() error {
	fileSize := uint64(len(f.data))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		start := f.DataOffset + t.Offset
		end := start + t.Size
		if start < f.DataOffset || end < start || end > fileSize {
			return fileErrorf(f.Path, "tensor %s needs %d bytes at offset %d in the data section (which starts at %d), file has %d bytes: %w",
				quote(t.Name), t.Size, t.Offset, f.DataOffset, fileSize, ErrTruncated)
		}
	}
	return nil
}

// product returns the product of dims, and false if it overflows int64.
func product(dims []uint64) (uint64, bool) {
	n := uint64(1)
	for _, d := range dims {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = lo
	}
	return n, true
}

// alignUp rounds off up to a multiple of align, a power of two. off is at
// most a file size, so the sum cannot overflow.
func alignUp(off, align uint64) uint64 {
	return (off + align - 1) &^ (align - 1)
}
