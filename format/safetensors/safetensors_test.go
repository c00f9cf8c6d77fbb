package safetensors

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/internal/fileerr"
)

// TestWriteMatchesReference: Write produces the bytes of the reference
// implementation's own serialization tests (huggingface/safetensors,
// safetensors/src/tensor.rs: test_serialization, test_empty,
// test_serialization_forced_alignement).
func TestWriteMatchesReference(t *testing.T) {
	t.Parallel()

	data := f32s(0, 1, 2, 3, 4, 5)
	cases := []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
		want     []byte
	}{
		{"one tensor", []Tensor{{Name: "attn.0", DType: F32, Shape: []int{1, 2, 3}, Data: data}}, nil,
			rawFile(`{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}`, data)},
		{"empty", nil, nil, rawFile("{}      ", nil)},
		{"empty with metadata", nil, map[string]string{"framework": "pt"},
			rawFile(`{"__metadata__":{"framework":"pt"}}     `, nil)},
		{"padding", []Tensor{{Name: "attn0", DType: F32, Shape: []int{1, 1, 2, 3}, Data: data}}, nil,
			rawFile(`{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       `, data)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := encode(t, c.tensors, c.metadata)
			require.Equal(t, c.want, got)
			_, err := Parse(c.name, got)
			require.NoError(t, err)
		})
	}
}

// TestWriteOrder: tensors are ordered by dtype, most aligned first, then by
// name, whatever the input order, so every tensor is aligned to its element size.
func TestWriteOrder(t *testing.T) {
	t.Parallel()

	tensors := sampleTensors()
	want := encode(t, tensors, map[string]string{"b": "2", "a": "1"})
	slices.Reverse(tensors)
	require.Equal(t, want, encode(t, tensors, map[string]string{"a": "1", "b": "2"}), "output depends on the input order")

	f, err := Parse("order", want)
	require.NoError(t, err)
	require.Zero(t, f.DataOffset%8)
	var byOffset []string
	for _, ti := range f.Tensors {
		require.Zero(t, (uint64(f.DataOffset)+ti.Begin)%uint64(ti.DType.Size()), "%s is aligned", ti.Name)
		byOffset = append(byOffset, ti.Name)
	}
	slices.SortStableFunc(byOffset, func(a, b string) int {
		ta, _ := f.Tensor(a)
		tb, _ := f.Tensor(b)
		return int(ta.Begin) - int(tb.Begin)
	})
	require.Equal(t, []string{"counter", "empty", "model.norm.weight", "model.embed_tokens.weight", "lm_head.weight",
		"odd \"name\"\n\t\\ é <&> \x01", "mask"}, byOffset)
	require.Contains(t, string(want), `{"__metadata__":{"a":"1","b":"2"},"counter":`)
	require.Contains(t, string(want), `"odd \"name\"\n\t\\ é <&> \u0001"`)
}

// TestRoundTrip: what Write writes, Parse and Open read back.
func TestRoundTrip(t *testing.T) {
	t.Parallel()

	tensors := sampleTensors()
	meta := map[string]string{"format": "pt", "note": "ünïcode \"quoted\""}
	data := encode(t, tensors, meta)
	path := writeFile(t, t.TempDir(), "model.safetensors", data)

	parsed, err := Parse("mem", data)
	require.NoError(t, err)
	opened, err := Open(path)
	require.NoError(t, err)
	defer opened.Close()
	require.True(t, opened.mapping != nil && opened.mapping.Mapped(), "Open maps the file")

	for _, f := range []*File{parsed, opened} {
		require.Equal(t, meta, f.Metadata)
		require.Len(t, f.Tensors, len(tensors))
		require.True(t, slices.IsSortedFunc(f.Tensors, func(a, b TensorInfo) int { return strings.Compare(a.Name, b.Name) }))
		for _, want := range tensors {
			info, ok := f.Tensor(want.Name)
			require.True(t, ok, want.Name)
			require.Equal(t, want.DType, info.DType)
			require.Equal(t, want.Shape, info.Shape)
			require.Equal(t, uint64(len(want.Data)), info.Size())
			got, err := f.TensorData(want.Name)
			require.NoError(t, err)
			require.Equal(t, len(want.Data), len(got))
			require.True(t, bytes.Equal(want.Data, got), want.Name)
		}
	}
	info, _ := parsed.Tensor("model.embed_tokens.weight")
	require.Equal(t, uint64(12), info.Elements())
	info, _ = parsed.Tensor("counter")
	require.Equal(t, uint64(1), info.Elements(), "a scalar has one element")

	// TensorData aliases the parsed bytes.
	d, err := parsed.TensorData("mask")
	require.NoError(t, err)
	d0 := &d[0]
	require.Same(t, &data[parsed.DataOffset+int64(mustTensor(t, parsed, "mask").Begin)], d0)

	// A file with no metadata has nil Metadata.
	plain, err := Parse("plain", encode(t, tensors[:1], nil))
	require.NoError(t, err)
	require.Nil(t, plain.Metadata)
}

func mustTensor(t *testing.T, f *File, name string) *TensorInfo {
	t.Helper()
	info, ok := f.Tensor(name)
	require.True(t, ok)
	return info
}

func TestTensorDataErrors(t *testing.T) {
	t.Parallel()

	f, err := Open(writeFile(t, t.TempDir(), "x.safetensors", encode(t, sampleTensors(), nil)))
	require.NoError(t, err)
	_, err = f.TensorData("nope")
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, `x.safetensors: no tensor "nope"`)
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "Close twice")
	_, err = f.TensorData("mask")
	require.ErrorContains(t, err, `cannot read tensor "mask": file is closed`)
}

// info renders one tensor entry of a header.
func info(dtype, shape, offsets string) string {
	return fmt.Sprintf(`{"dtype":%s,"shape":%s,"data_offsets":%s}`, dtype, shape, offsets)
}

func TestParseRejectsBadFiles(t *testing.T) {
	t.Parallel()

	good := encode(t, sampleTensors(), map[string]string{"a": "b"})
	eight := seq(0, 8)
	one := func(entry string, data []byte) []byte { return rawFile(`{"w":`+entry+`}`, data) }
	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"empty", nil, []string{"file is 0 bytes", "too short"}},
		{"short", []byte{1, 2, 3}, []string{"file is 3 bytes"}},
		{"truncated data", good[:len(good)-1], []string{"run past the end", "truncated"}},
		{"header beyond file", append(rawFile(`{}`, nil)[:8:8], '{'), []string{"header length is 2 bytes, but the file has only 1", "truncated"}},
		{"header too large", rawFile("", nil)[:0:0], nil}, // replaced below
		{"not UTF-8", rawFile("{\"\xff\":1}", nil), []string{"not valid UTF-8"}},
		{"not an object", rawFile(`["w"]`, nil), []string{"does not start with '{'"}},
		{"leading space", rawFile(` {}`, nil), []string{"does not start with '{'"}},
		{"empty header", rawFile(``, nil), []string{"does not start with '{'"}},
		{"bad JSON", rawFile(`{"w":`, nil), []string{"not a valid JSON object"}},
		{"trailing JSON", rawFile(`{} {}`, nil), []string{"not a valid JSON object", "after the object"}},
		{"duplicate tensor", rawFile(`{"w":`+info(`"U8"`, `[1]`, `[0,1]`)+`,"w":`+info(`"U8"`, `[1]`, `[1,2]`)+`}`, seq(0, 2)),
			[]string{`name "w" appears twice`}},
		{"duplicate field", one(`{"dtype":"U8","dtype":"F32","shape":[1],"data_offsets":[0,1]}`, seq(0, 1)),
			[]string{`tensor "w"`, `name "dtype" appears twice`}},
		{"duplicate metadata", rawFile(`{"__metadata__":{"k":"a","k":"b"}}`, nil), []string{"__metadata__", `name "k" appears twice`}},
		{"metadata not strings", rawFile(`{"__metadata__":{"k":1}}`, nil), []string{"__metadata__", `key "k"`, "want a string, got 1"}},
		{"metadata not an object", rawFile(`{"__metadata__":"x"}`, nil), []string{"__metadata__", "want an object"}},
		{"info not an object", one(`[1,2]`, nil), []string{`tensor "w"`, "want an object with dtype, shape and data_offsets"}},
		{"unknown dtype", one(info(`"F128"`, `[1]`, `[0,16]`), seq(0, 16)), []string{`tensor "w"`, `unknown dtype "F128"`, "known: BOOL, U8"}},
		{"dtype not a string", one(info(`4`, `[1]`, `[0,4]`), seq(0, 4)), []string{"dtype: want a string, got 4"}},
		{"missing dtype", one(`{"shape":[1],"data_offsets":[0,1]}`, seq(0, 1)), []string{"dtype is missing"}},
		{"missing shape", one(`{"dtype":"U8","data_offsets":[0,1]}`, seq(0, 1)), []string{"shape is missing"}},
		{"missing offsets", one(`{"dtype":"U8","shape":[1]}`, seq(0, 1)), []string{"data_offsets is missing"}},
		{"null shape", one(info(`"U8"`, `null`, `[0,1]`), seq(0, 1)), []string{"shape: want an array of non-negative integers, got null"}},
		{"negative shape", one(info(`"U8"`, `[-1]`, `[0,1]`), seq(0, 1)), []string{"shape: want an array of non-negative integers, got [-1]"}},
		{"fractional shape", one(info(`"U8"`, `[1.5]`, `[0,1]`), seq(0, 1)), []string{"shape: want an array"}},
		{"three offsets", one(info(`"U8"`, `[1]`, `[0,1,2]`), seq(0, 1)), []string{"data_offsets has 3 numbers, want 2"}},
		{"offsets backwards", one(info(`"U8"`, `[1]`, `[2,1]`), seq(0, 2)), []string{"data_offsets [2, 1] end before they begin"}},
		{"offsets beyond data", one(info(`"F32"`, `[2]`, `[0,8]`), seq(0, 4)),
			[]string{"data_offsets [0, 8] run past the end of the 4-byte data buffer", "truncated"}},
		{"huge offsets", one(info(`"U8"`, `[1]`, `[18446744073709551615,18446744073709551615]`), nil), []string{"run past the end"}},
		{"offsets beyond uint64", one(info(`"U8"`, `[1]`, `[0,18446744073709551616]`), nil), []string{"data_offsets: want an array"}},
		{"shape and size disagree", one(info(`"F32"`, `[3]`, `[0,8]`), eight), []string{`tensor "w"`, "shape [3] of F32 needs 12 bytes, data_offsets [0, 8] hold 8"}},
		{"shape overflows", one(info(`"F32"`, `[4294967296,4294967296]`, `[0,8]`), eight), []string{"shape [4294967296 4294967296] of F32 overflows"}},
		{"huge dimension", one(info(`"F32"`, `[0,18446744073709551615]`, `[0,0]`), nil), []string{"shape dimension 1 is 18446744073709551615"}},
		{"overlap", rawFile(`{"a":`+info(`"U8"`, `[8]`, `[0,8]`)+`,"b":`+info(`"U8"`, `[4]`, `[4,8]`)+`}`, eight),
			[]string{`tensor "b" at data_offsets [4, 8] overlaps tensor "a" at [0, 8]`}},
		{"empty tensor inside another", rawFile(`{"a":`+info(`"U8"`, `[8]`, `[0,8]`)+`,"z":`+info(`"U8"`, `[0]`, `[4,4]`)+`}`, eight),
			[]string{`tensor "z" at data_offsets [4, 4] overlaps tensor "a"`}},
		{"gap", rawFile(`{"a":`+info(`"U8"`, `[2]`, `[0,2]`)+`,"b":`+info(`"U8"`, `[4]`, `[4,8]`)+`}`, eight),
			[]string{`bytes [2, 4) of the data buffer belong to no tensor: between "a", which ends at 2, and "b", which begins at 4`}},
		{"not at 0", one(info(`"U8"`, `[4]`, `[4,8]`), eight), []string{`bytes [0, 4) of the data buffer belong to no tensor: the first, "w", begins at 4`}},
		{"trailing data", one(info(`"U8"`, `[4]`, `[0,4]`), eight), []string{"the data buffer is 8 bytes but the tensors end at 4: 4 bytes belong to no tensor"}},
		{"data without tensors", rawFile(`{}`, eight), []string{"the data buffer is 8 bytes but the tensors end at 0"}},
		{"long name", one(info(`"U8"`, `[1]`, `[0,2]`), seq(0, 2)), nil}, // replaced below
	}
	cases[4].data = rawFile("", nil)
	cases[4].data[0], cases[4].data[1], cases[4].data[2], cases[4].data[3] = 0x01, 0xe1, 0xf5, 0x05 // 100,000,001
	cases[4].want = []string{"header length is 100000001 bytes, more than the limit of 100000000"}
	long := strings.Repeat("x", 1000)
	cases[len(cases)-1].data = rawFile(`{"`+long+`":`+info(`"U8"`, `[1]`, `[0,2]`)+`}`, seq(0, 2))
	cases[len(cases)-1].want = []string{`"` + strings.Repeat("x", fileerr.MaxQuoted) + `"... (1000 bytes)`, "needs 1 bytes"}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse("bad.safetensors", c.data)
			require.Error(t, err)
			require.Nil(t, f)
			require.True(t, strings.HasPrefix(err.Error(), "safetensors: bad.safetensors: "), err.Error())
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
			require.Less(t, len(err.Error()), 600, "error messages stay short")
		})
	}
}

// TestParseAccepts: inputs the reference implementation accepts.
func TestParseAccepts(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		name, header string
		data         []byte
	}{
		{"no padding", `{}`, nil},
		{"whitespace inside and after", "{ \"w\" : " + info(`"U8"`, `[ 2 ]`, `[ 0 , 2 ]`) + " }\n\t  ", seq(0, 2)},
		{"null metadata", `{"__metadata__":null}`, nil},
		{"extra fields are ignored", `{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"extra":[1,{"x":null}]}}`, seq(0, 1)},
		{"any order", `{"b":` + info(`"U8"`, `[1]`, `[1,2]`) + `,"a":` + info(`"U8"`, `[1]`, `[0,1]`) + `}`, seq(0, 2)},
		{"empty tensors share an offset", `{"a":` + info(`"F32"`, `[0]`, `[0,0]`) + `,"b":` + info(`"F64"`, `[2,0]`, `[0,0]`) + `}`, nil},
		{"empty name", `{"":` + info(`"U8"`, `[1]`, `[0,1]`) + `}`, seq(0, 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.name, rawFile(c.header, c.data))
			require.NoError(t, err)
		})
	}
}

func TestWriteRejects(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
		want     string
	}{
		{"duplicate", []Tensor{{Name: "a", DType: U8, Shape: []int{1}, Data: []byte{1}}, {Name: "a", DType: U8, Shape: []int{1}, Data: []byte{1}}}, nil,
			`tensor "a": the name appears twice`},
		{"unknown dtype", []Tensor{{Name: "a", DType: "Q4_0", Shape: []int{1}, Data: []byte{1}}}, nil, `unknown dtype "Q4_0"`},
		{"size", []Tensor{{Name: "a", DType: F32, Shape: []int{2, 2}, Data: seq(0, 15)}}, nil, "shape [2 2] of F32 needs 16 bytes, data has 15"},
		{"negative", []Tensor{{Name: "a", DType: F32, Shape: []int{-1}}}, nil, "dimension 0 is negative"},
		{"overflow", []Tensor{{Name: "a", DType: F32, Shape: []int{1 << 62, 8}}}, nil, "overflows"},
		{"reserved", []Tensor{{Name: "__metadata__", DType: U8, Shape: []int{}, Data: []byte{1}}}, nil, "reserved"},
		{"bad name", []Tensor{{Name: "\xff", DType: U8, Shape: []int{}, Data: []byte{1}}}, nil, "not valid UTF-8"},
		{"bad metadata", nil, map[string]string{"k": "\xff"}, `metadata "k"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, c.tensors, c.metadata)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			require.Zero(t, buf.Len(), "nothing is written")
		})
	}
	err := Write(failingWriter{}, sampleTensors(), nil)
	require.ErrorContains(t, err, "disk full")
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "missing.safetensors"))
	require.ErrorContains(t, err, "missing.safetensors")
	_, err = Open(writeFile(t, dir, "empty.safetensors", nil))
	require.ErrorContains(t, err, "empty.safetensors: file is 0 bytes")
	_, err = Open(writeFile(t, dir, "cut.safetensors", encode(t, sampleTensors(), nil)[:50]))
	require.ErrorIs(t, err, ErrTruncated)
}
