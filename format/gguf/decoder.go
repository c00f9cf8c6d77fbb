package gguf

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// decoder reads little-endian GGUF primitives from an in-memory file,
// checking every read against the bytes that remain.
type decoder struct {
	name string // file name for error messages
	data []byte
	off  uint64 // read position; never beyond len(data)

	nestedArrays uint64 // arrays read so far as elements of other arrays
}

// what describes the thing being read, for error messages. It is formatted
// only when an error occurs, so describing every read allocates nothing.
type what struct {
	thing string // "version", "metadata key", "tensor", "name of tensor", ...
	name  string // a key or tensor name, if named
	named bool
	index int    // the index of a pair or tensor not yet named; -1 if none
	part  string // which part of the thing: "value type", "dimension count", ...
}

func plain(thing string) what { return what{thing: thing, index: -1} }

func named(thing, name string) what { return what{thing: thing, name: name, named: true, index: -1} }

func indexed(thing string, i uint64) what { return what{thing: thing, index: int(i)} }

// with returns w describing one part of the thing.
func (w what) with(part string) what {
	w.part = part
	return w
}

// String formats w: `metadata key "general.name" value type`.
func (w what) String() string {
	var b strings.Builder
	b.WriteString(w.thing)
	if w.named {
		b.WriteString(" " + quote(w.name))
	}
	if w.index >= 0 {
		b.WriteString(" " + strconv.Itoa(w.index))
	}
	if w.part != "" {
		b.WriteString(" " + w.part)
	}
	return b.String()
}

func (d *decoder) remaining() uint64 { return uint64(len(d.data)) - d.off }

// take returns the next n bytes.
func (d *decoder) take(n uint64, w what) ([]byte, error) {
	if n > d.remaining() {
		return nil, fileErrorf(d.name, "%s at offset %d needs %d bytes, but only %d are left (file is %d bytes): %w",
			w, d.off, n, d.remaining(), len(d.data), ErrTruncated)
	}
	b := d.data[d.off : d.off+n]
	d.off += n
	return b, nil
}

func (d *decoder) u32(w what) (uint32, error) {
	b, err := d.take(4, w)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64(w what) (uint64, error) {
	b, err := d.take(8, w)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a length-prefixed string and copies it out of the file, so it
// stays valid after the file is unmapped.
func (d *decoder) str(w what) (string, error) {
	n, err := d.u64(w)
	if err != nil {
		return "", err
	}
	if n > d.remaining() {
		return "", fileErrorf(d.name, "%s at offset %d has length %d, but only %d bytes are left: %w",
			w, d.off-8, n, d.remaining(), ErrTruncated)
	}
	b, _ := d.take(n, w)
	return string(b), nil
}
