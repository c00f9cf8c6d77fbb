package safetensors

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Tensor is one tensor to write: its name, element type, shape (outermost
// first) and little-endian row-major bytes.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// Write writes tensors and metadata as a safetensors file, byte for byte as
// the reference implementation serializes them: tensors ordered by dtype from
// the most to the least aligned and then by name, each directly after the
// previous one; the header compact JSON with __metadata__ first (its keys
// sorted; omitted when metadata is nil), padded with spaces to a multiple of 8
// bytes so that every tensor is aligned to its element size. The same input
// always gives the same bytes. It checks that names are unique valid UTF-8,
// that dtypes are known and that each tensor's data has exactly the size its
// shape and dtype say; nothing is written if a check fails.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	ordered := make([]*Tensor, len(tensors))
	seen := make(map[string]bool, len(tensors))
	for i := range tensors {
		t := &tensors[i]
		if err := checkTensor(t); err != nil {
			return fmt.Errorf("safetensors: writing tensor %s: %w", quote(t.Name), err)
		}
		if seen[t.Name] {
			return fmt.Errorf("safetensors: writing tensor %s: the name appears twice", quote(t.Name))
		}
		seen[t.Name] = true
		ordered[i] = t
	}
	slices.SortFunc(ordered, func(a, b *Tensor) int {
		return cmp.Or(cmp.Compare(b.DType.rank(), a.DType.rank()), cmp.Compare(a.Name, b.Name))
	})

	header := []byte{'{'}
	if metadata != nil {
		keys := make([]string, 0, len(metadata))
		for k, v := range metadata {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return fmt.Errorf("safetensors: writing metadata %s: keys and values must be valid UTF-8", quote(k))
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		header = appendString(header, metadataKey)
		header = append(header, ":{"...)
		for i, k := range keys {
			if i > 0 {
				header = append(header, ',')
			}
			header = appendString(header, k)
			header = append(header, ':')
			header = appendString(header, metadata[k])
		}
		header = append(header, '}')
	}
	var offset uint64
	for i, t := range ordered {
		if i > 0 || metadata != nil {
			header = append(header, ',')
		}
		header = appendString(header, t.Name)
		header = append(header, `:{"dtype":`...)
		header = appendString(header, string(t.DType))
		header = append(header, `,"shape":[`...)
		for j, d := range t.Shape {
			if j > 0 {
				header = append(header, ',')
			}
			header = strconv.AppendInt(header, int64(d), 10)
		}
		header = append(header, `],"data_offsets":[`...)
		header = strconv.AppendUint(header, offset, 10)
		header = append(header, ',')
		offset += uint64(len(t.Data))
		header = strconv.AppendUint(header, offset, 10)
		header = append(header, "]}"...)
	}
	header = append(header, '}')
	for len(header)%8 != 0 {
		header = append(header, ' ')
	}
	if len(header) > MaxHeaderSize {
		return fmt.Errorf("safetensors: writing: the header would be %d bytes, more than the limit of %d", len(header), MaxHeaderSize)
	}

	bw := bufio.NewWriter(w)
	bw.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(header))))
	bw.Write(header)
	for _, t := range ordered {
		bw.Write(t.Data)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("safetensors: writing: %w", err)
	}
	return nil
}

// checkTensor checks one tensor before it is written.
func checkTensor(t *Tensor) error {
	switch {
	case !utf8.ValidString(t.Name):
		return fmt.Errorf("the name is not valid UTF-8")
	case t.Name == metadataKey:
		return fmt.Errorf("the name is reserved for the metadata")
	case t.DType.Size() == 0:
		return fmt.Errorf("unknown dtype %s (known: %s)", quote(string(t.DType)), knownDTypes())
	}
	for i, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("shape %v: dimension %d is negative", t.Shape, i)
		}
	}
	n, ok := elements(t.Shape)
	if ok {
		n, ok = mulOK(n, uint64(t.DType.Size()))
	}
	if !ok {
		return fmt.Errorf("shape %v of %s overflows: more than 2^64 bytes", t.Shape, t.DType)
	}
	if n != uint64(len(t.Data)) {
		return fmt.Errorf("shape %v of %s needs %d bytes, data has %d", t.Shape, t.DType, n, len(t.Data))
	}
	return nil
}

// appendString appends s as a JSON string the way serde_json writes it: only
// '"', '\\' and control characters are escaped, control characters without a
// short escape as \u00xx with lowercase hex digits.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
