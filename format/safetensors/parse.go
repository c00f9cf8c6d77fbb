package safetensors

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"unicode/utf8"
)

// MaxHeaderSize is the largest header accepted, as in the reference implementation.
const MaxHeaderSize = 100_000_000

// metadataKey is the header entry that holds free-form string metadata.
const metadataKey = "__metadata__"

// Parse parses the bytes of a whole safetensors file; name is used in error
// messages. Tensor data is not copied: TensorData slices data, which must not
// change while the File is used.
func Parse(name string, data []byte) (*File, error) {
	if len(data) < 8 {
		return nil, fileErrorf(name, "file is %d bytes, too short for the 8-byte header length: %w", len(data), ErrTruncated)
	}
	n := binary.LittleEndian.Uint64(data)
	if n > MaxHeaderSize {
		return nil, fileErrorf(name, "header length is %d bytes, more than the limit of %d; is this a safetensors file?", n, MaxHeaderSize)
	}
	if n > uint64(len(data)-8) {
		return nil, fileErrorf(name, "header length is %d bytes, but the file has only %d after the 8-byte length: %w", n, len(data)-8, ErrTruncated)
	}
	header := data[8 : 8+n]
	if !utf8.Valid(header) {
		return nil, fileErrorf(name, "header is not valid UTF-8")
	}
	if len(header) == 0 || header[0] != '{' {
		return nil, fileErrorf(name, "header does not start with '{'; is this a safetensors file?")
	}
	entries, err := members(header)
	if err != nil {
		return nil, fileErrorf(name, "header is not a valid JSON object: %v", err)
	}

	f := &File{Path: name, DataOffset: int64(8 + n), data: data}
	dataLen := uint64(len(data)) - 8 - n
	for _, e := range entries {
		if e.key == metadataKey {
			if f.Metadata, err = parseMetadata(e.value); err != nil {
				return nil, fileErrorf(name, "%s: %v", metadataKey, err)
			}
			continue
		}
		t, err := parseInfo(e.value)
		if err != nil {
			return nil, fileErrorf(name, "tensor %s: %v", quote(e.key), err)
		}
		t.Name = e.key
		if err := checkInfo(&t, dataLen); err != nil {
			return nil, fileErrorf(name, "tensor %s: %w", quote(e.key), err)
		}
		f.Tensors = append(f.Tensors, t)
	}
	if err := checkTiling(f.Tensors, dataLen); err != nil {
		return nil, fileErrorf(name, "%v", err)
	}
	slices.SortFunc(f.Tensors, func(a, b TensorInfo) int { return cmp.Compare(a.Name, b.Name) })
	f.index = make(map[string]int, len(f.Tensors))
	for i, t := range f.Tensors {
		f.index[t.Name] = i
	}
	return f, nil
}

// checkInfo checks a tensor's dtype, and that its byte range lies in the data
// buffer and holds exactly its shape's elements.
func checkInfo(t *TensorInfo, dataLen uint64) error {
	size := t.DType.Size()
	if size == 0 {
		return fmt.Errorf("unknown dtype %s (known: %s)", quote(string(t.DType)), knownDTypes())
	}
	if t.End < t.Begin {
		return fmt.Errorf("data_offsets [%d, %d] end before they begin", t.Begin, t.End)
	}
	if t.End > dataLen {
		return fmt.Errorf("data_offsets [%d, %d] run past the end of the %d-byte data buffer: %w", t.Begin, t.End, dataLen, ErrTruncated)
	}
	n, ok := elements(t.Shape)
	if ok {
		n, ok = mulOK(n, uint64(size))
	}
	if !ok {
		return fmt.Errorf("shape %v of %s overflows: more than 2^64 bytes", t.Shape, t.DType)
	}
	if n != t.Size() {
		return fmt.Errorf("shape %v of %s needs %d bytes, data_offsets [%d, %d] hold %d", t.Shape, t.DType, n, t.Begin, t.End, t.Size())
	}
	return nil
}

// mulOK multiplies a and b, reporting overflow of uint64.
func mulOK(a, b uint64) (uint64, bool) {
	if a != 0 && b > math.MaxUint64/a {
		return 0, false
	}
	return a * b, true
}

// checkTiling checks that the tensors' byte ranges cover the data buffer
// exactly, with no overlap and no gap, as the reference implementation requires.
func checkTiling(tensors []TensorInfo, dataLen uint64) error {
	byOffset := make([]*TensorInfo, len(tensors))
	for i := range tensors {
		byOffset[i] = &tensors[i]
	}
	slices.SortFunc(byOffset, func(a, b *TensorInfo) int {
		return cmp.Or(cmp.Compare(a.Begin, b.Begin), cmp.Compare(a.End, b.End), cmp.Compare(a.Name, b.Name))
	})
	var pos uint64
	var prev *TensorInfo
	for _, t := range byOffset {
		switch {
		case t.Begin < pos:
			return fmt.Errorf("tensor %s at data_offsets [%d, %d] overlaps tensor %s at [%d, %d]",
				quote(t.Name), t.Begin, t.End, quote(prev.Name), prev.Begin, prev.End)
		case t.Begin > pos && prev == nil:
			return fmt.Errorf("bytes [0, %d) of the data buffer belong to no tensor: the first, %s, begins at %d",
				t.Begin, quote(t.Name), t.Begin)
		case t.Begin > pos:
			return fmt.Errorf("bytes [%d, %d) of the data buffer belong to no tensor: between %s, which ends at %d, and %s, which begins at %d",
				pos, t.Begin, quote(prev.Name), pos, quote(t.Name), t.Begin)
		}
		pos, prev = t.End, t
	}
	if pos != dataLen {
		return fmt.Errorf("the data buffer is %d bytes but the tensors end at %d: %d bytes belong to no tensor", dataLen, pos, dataLen-pos)
	}
	return nil
}

// parseInfo decodes one tensor's {"dtype", "shape", "data_offsets"} object.
// Other members are ignored, as the reference implementation does.
func parseInfo(raw json.RawMessage) (TensorInfo, error) {
	ms, err := members(raw)
	if err != nil {
		return TensorInfo{}, fmt.Errorf("want an object with dtype, shape and data_offsets: %v", err)
	}
	var t TensorInfo
	var dtype string
	var shape, offsets []uint64
	seen := map[string]bool{}
	for _, m := range ms {
		var err error
		switch m.key {
		case "dtype":
			err = decodeString(m.value, &dtype)
		case "shape":
			err = decodeUints(m.value, &shape)
		case "data_offsets":
			err = decodeUints(m.value, &offsets)
		default:
			continue
		}
		if err != nil {
			return TensorInfo{}, fmt.Errorf("%s: %v", m.key, err)
		}
		seen[m.key] = true
	}
	for _, key := range []string{"dtype", "shape", "data_offsets"} {
		if !seen[key] {
			return TensorInfo{}, fmt.Errorf("%s is missing", key)
		}
	}
	if len(offsets) != 2 {
		return TensorInfo{}, fmt.Errorf("data_offsets has %d numbers, want 2 (begin and end)", len(offsets))
	}
	t.DType = DType(dtype)
	t.Begin, t.End = offsets[0], offsets[1]
	t.Shape = make([]int, len(shape))
	for i, d := range shape {
		if d > math.MaxInt64 {
			return TensorInfo{}, fmt.Errorf("shape dimension %d is %d, beyond any file", i, d)
		}
		t.Shape[i] = int(d)
	}
	return t, nil
}

// parseMetadata decodes the __metadata__ object, whose values must be strings.
// null means no metadata, as in the reference implementation.
func parseMetadata(raw json.RawMessage) (map[string]string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	ms, err := members(raw)
	if err != nil {
		return nil, fmt.Errorf("want an object of strings: %v", err)
	}
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		var s string
		if err := decodeString(m.value, &s); err != nil {
			return nil, fmt.Errorf("key %s: %v", quote(m.key), err)
		}
		out[m.key] = s
	}
	return out, nil
}

// decodeString decodes a JSON string (not null).
func decodeString(raw json.RawMessage, dst *string) error {
	if len(raw) == 0 || raw[0] != '"' {
		return fmt.Errorf("want a string, got %s", abbreviate(raw))
	}
	return json.Unmarshal(raw, dst)
}

// decodeUints decodes a JSON array of non-negative integers (not null).
func decodeUints(raw json.RawMessage, dst *[]uint64) error {
	if len(raw) == 0 || raw[0] != '[' {
		return fmt.Errorf("want an array of non-negative integers, got %s", abbreviate(raw))
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("want an array of non-negative integers, got %s", abbreviate(raw))
	}
	return nil
}

// abbreviate shortens a JSON value for an error message.
func abbreviate(raw json.RawMessage) string {
	const limit = 48
	if len(raw) <= limit {
		return string(raw)
	}
	return string(raw[:limit]) + "..."
}

// member is one name/value pair of a JSON object.
type member struct {
	key   string
	value json.RawMessage
}

// members splits the JSON object raw (followed by nothing but whitespace) into
// its members in document order, refusing a name that appears twice (which
// encoding/json would silently resolve to the last value).
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want an object, got %s", abbreviate(raw))
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is %v, want a string", tok)
		}
		if seen[key] {
			return nil, fmt.Errorf("name %s appears twice", quote(key))
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, err
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("unexpected %v after the object", tok)
		}
		return nil, err
	}
	return out, nil
}
