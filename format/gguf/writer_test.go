package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// everyValue returns one metadata pair for every value type, including empty
// and nested arrays.
func everyValue() []KV {
	return []KV{
		{"u8", Uint8Value(250)},
		{"i8", Int8Value(-128)},
		{"u16", Uint16Value(65000)},
		{"i16", Int16Value(-32000)},
		{"u32", Uint32Value(4000000000)},
		{"i32", Int32Value(-2000000000)},
		{"f32", Float32Value(-0.25)},
		{"f32.nan", Float32Value(float32(math.NaN()))},
		{"bool.true", BoolValue(true)},
		{"bool.false", BoolValue(false)},
		{"string", StringValue("héllo, wörld")},
		{"string.empty", StringValue("")},
		{"u64", Uint64Value(math.MaxUint64)},
		{"i64", Int64Value(math.MinInt64)},
		{"f64", Float64Value(math.Inf(-1))},
		{"arr.u8", ArrayValue(Uint8, []Value{Uint8Value(0), Uint8Value(255)})},
		{"arr.i8", ArrayValue(Int8, []Value{Int8Value(-1), Int8Value(127)})},
		{"arr.u16", ArrayValue(Uint16, []Value{Uint16Value(1), Uint16Value(65535)})},
		{"arr.i16", ArrayValue(Int16, []Value{Int16Value(-32768)})},
		{"arr.u32", ArrayValue(Uint32, []Value{Uint32Value(7)})},
		{"arr.i32", Int32sValue([]int32{-1, 0, 1})},
		{"arr.f32", Float32sValue([]float32{0.5, -1e30})},
		{"arr.bool", ArrayValue(Bool, []Value{BoolValue(true), BoolValue(false)})},
		{"arr.string", StringsValue([]string{"a", "", "ccc"})},
		{"arr.u64", ArrayValue(Uint64, []Value{Uint64Value(1 << 63)})},
		{"arr.i64", ArrayValue(Int64, []Value{Int64Value(-1)})},
		{"arr.f64", ArrayValue(Float64, []Value{Float64Value(1e300)})},
		{"arr.empty", ArrayValue(Float64, nil)},
		{"arr.arr.string", ArrayValue(Array, []Value{
			StringsValue([]string{"x", "y"}),
			StringsValue(nil),
			StringsValue([]string{"z"}),
		})},
		{"arr.arr.mixed", ArrayValue(Array, []Value{
			Int32sValue([]int32{1}),
			ArrayValue(Array, []Value{StringsValue([]string{"deep"})}),
		})},
	}
}

func TestRoundTripEveryValueType(t *testing.T) {
	t.Parallel()

	kvs := everyValue()
	w := NewWriter()
	for _, kv := range kvs {
		w.Add(kv.Key, kv.Value)
	}
	data := writeBytes(t, w)

	v2 := append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(v2[4:], 2)

	for _, tc := range []struct {
		name    string
		data    []byte
		version uint32
	}{{"v3", data, 3}, {"v2", v2, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("roundtrip.gguf", tc.data)
			require.NoError(t, err)
			require.Equal(t, tc.version, f.Version)
			require.Equal(t, uint64(DefaultAlignment), f.Alignment)
			require.Empty(t, f.Tensors)
			require.Len(t, f.Metadata, len(kvs))
			for i, kv := range kvs {
				require.Equal(t, kv.Key, f.Metadata[i].Key, "metadata order")
				require.Truef(t, kv.Value.Equal(f.Metadata[i].Value), "key %s: wrote %v, read %v", kv.Key, kv.Value, f.Metadata[i].Value)
				got, ok := f.Lookup(kv.Key)
				require.True(t, ok)
				require.True(t, kv.Value.Equal(got))
			}
		})
	}
}

func TestTypedGetters(t *testing.T) {
	t.Parallel()

	w := NewWriter()
	for _, kv := range everyValue() {
		w.Add(kv.Key, kv.Value)
	}
	f, err := Parse("getters.gguf", writeBytes(t, w))
	require.NoError(t, err)

	s, err := f.String("string")
	require.NoError(t, err)
	require.Equal(t, "héllo, wörld", s)

	u, err := f.Uint("u8")
	require.NoError(t, err)
	require.Equal(t, uint64(250), u)
	u, err = f.Uint("u64")
	require.NoError(t, err)
	require.Equal(t, uint64(math.MaxUint64), u)

	x, err := f.Float("f32")
	require.NoError(t, err)
	require.Equal(t, -0.25, x)
	x, err = f.Float("u32")
	require.NoError(t, err, "Float accepts integers")
	require.Equal(t, 4e9, x)
	x, err = f.Float("i8")
	require.NoError(t, err)
	require.Equal(t, -128.0, x)

	b, err := f.Bool("bool.true")
	require.NoError(t, err)
	require.True(t, b)

	ss, err := f.Strings("arr.string")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "", "ccc"}, ss)

	fs, err := f.Float32s("arr.f32")
	require.NoError(t, err)
	require.Equal(t, []float32{0.5, -1e30}, fs)

	is, err := f.Int32s("arr.u16")
	require.NoError(t, err)
	require.Equal(t, []int32{1, 65535}, is)
	is, err = f.Int32s("arr.i32")
	require.NoError(t, err)
	require.Equal(t, []int32{-1, 0, 1}, is)

	errTests := []struct {
		name    string
		get     func() error
		wantErr string
	}{
		{"string missing", func() error { _, err := f.String("nope"); return err }, `gguf: getters.gguf: metadata key "nope" (string) is missing`},
		{"string wrong type", func() error { _, err := f.String("u32"); return err }, `gguf: getters.gguf: metadata key "u32" is uint32, want string`},
		{"uint negative", func() error { _, err := f.Uint("i8"); return err }, `metadata key "i8" is int8 -128, want a non-negative value`},
		{"uint of float", func() error { _, err := f.Uint("f32"); return err }, `metadata key "f32" is float32, want an unsigned integer`},
		{"float of string", func() error { _, err := f.Float("string"); return err }, `metadata key "string" is string, want a number`},
		{"bool of int", func() error { _, err := f.Bool("u8"); return err }, `metadata key "u8" is uint8, want bool`},
		{"strings of ints", func() error { _, err := f.Strings("arr.i32"); return err }, `metadata key "arr.i32" is array of int32, want array of string`},
		{"float32s of f64", func() error { _, err := f.Float32s("arr.f64"); return err }, `metadata key "arr.f64" is array of float64, want array of float32`},
		{"int32s out of range", func() error { _, err := f.Int32s("arr.u64"); return err }, `metadata key "arr.u64" element 0 is 9223372036854775808, which does not fit in an int32`},
		{"int32s of strings", func() error { _, err := f.Int32s("arr.string"); return err }, `metadata key "arr.string" is array of string, want array of integers`},
		{"int32s of scalar", func() error { _, err := f.Int32s("u8"); return err }, `metadata key "u8" is uint8, want array of integers`},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorContains(t, tt.get(), tt.wantErr)
		})
	}
	_, err = f.Uint("missing.key")
	require.True(t, errors.Is(err, ErrKeyNotFound))

	require.Equal(t, "", f.Architecture())
}

// TestWriterExactBytes checks the writer against a file assembled by hand
// from the format description, so reader and writer cannot share a mistake.
func TestWriterExactBytes(t *testing.T) {
	t.Parallel()

	w := NewWriter()
	w.AddString("general.architecture", "llama")
	w.AddInt32s("ids", []int32{-1, 2})
	data := make([]byte, 40) // 10 F32: 40 bytes, padded to 64
	for i := range data {
		data[i] = byte(i + 1)
	}
	require.NoError(t, w.AddTensor("t", F32, []uint64{5, 2}, data))
	require.NoError(t, w.AddTensor("u", I8, []uint64{3}, []byte{7, 8, 9}))

	want := header(3, 2, 2).
		str("general.architecture").u32(uint32(String)).str("llama").
		str("ids").u32(uint32(Array)).u32(uint32(Int32)).u64(2).u32(0xffffffff).u32(2).
		tensorInfo("t", []uint64{5, 2}, F32, 0).
		tensorInfo("u", []uint64{3}, I8, 64).
		pad(32).
		bytes(data...).zeros(24).
		bytes(7, 8, 9).zeros(29)
	got := writeBytes(t, w)
	require.Equal(t, []byte(want), got)
	require.Equal(t, got, writeBytes(t, w), "writing twice gives the same bytes")

	f, err := Parse("exact.gguf", got)
	require.NoError(t, err)
	require.Equal(t, "llama", f.Architecture())
	require.Equal(t, uint64(len(want)-64-32), f.DataOffset)
	tu, ok := f.Tensor("u")
	require.True(t, ok)
	b, err := f.TensorData(tu)
	require.NoError(t, err)
	require.Equal(t, []byte{7, 8, 9}, b)
	require.Equal(t, len(b), cap(b), "tensor data is capped so appends cannot overwrite the file")
}

func TestWriterAlignment(t *testing.T) {
	t.Parallel()

	w := NewWriter()
	w.AddUint32("general.alignment", 64)
	require.NoError(t, w.AddTensor("a", F16, []uint64{3}, make([]byte, 6)))
	require.NoError(t, w.AddTensor("b", Q8_0, []uint64{32, 2}, make([]byte, 68)))
	require.NoError(t, w.AddTensor("c", BF16, []uint64{1}, []byte{1, 2}))
	f, err := Parse("aligned.gguf", writeBytes(t, w))
	require.NoError(t, err)
	require.Equal(t, uint64(64), f.Alignment)
	require.Zero(t, f.DataOffset%64)
	require.Equal(t, []uint64{0, 64, 192}, []uint64{f.Tensors[0].Offset, f.Tensors[1].Offset, f.Tensors[2].Offset})
	require.Equal(t, uint64(68), f.Tensors[1].Size)
	require.Equal(t, uint64(64), f.Tensors[1].Elements())
	c, err := f.TensorData(&f.Tensors[2])
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2}, c)
}

func TestWriterErrors(t *testing.T) {
	t.Parallel()

	tensorTests := []struct {
		name    string
		tname   string
		typ     TensorType
		dims    []uint64
		data    []byte
		wantErr string
	}{
		{"duplicate name", "dup", F32, []uint64{1}, make([]byte, 4), `tensor "dup" added twice`},
		{"no dims", "x", F32, nil, nil, "has 0 dimensions"},
		{"five dims", "x", F32, []uint64{1, 1, 1, 1, 1}, make([]byte, 4), "has 5 dimensions"},
		{"zero dim", "x", F32, []uint64{4, 0}, nil, "dimension 1 is 0"},
		{"overflow", "x", F32, []uint64{1 << 40, 1 << 40}, nil, "overflows"},
		{"partial block", "x", Q8_0, []uint64{16}, make([]byte, 17), "not a multiple of the Q8_0 block size 32"},
		{"unknown type", "x", TensorType(99), []uint64{4}, nil, "unknown tensor type type(99)"},
		{"wrong data length", "x", F32, []uint64{4, 2}, make([]byte, 31), `tensor "x" is F32 [4 2] and needs 32 bytes, got 31`},
	}
	for _, tt := range tensorTests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter()
			require.NoError(t, w.AddTensor("dup", F32, []uint64{1}, make([]byte, 4)))
			require.ErrorContains(t, w.AddTensor(tt.tname, tt.typ, tt.dims, tt.data), tt.wantErr)
		})
	}

	kvTests := []struct {
		name    string
		add     func(w *Writer)
		wantErr string
	}{
		{"duplicate key", func(w *Writer) { w.AddString("k", "a"); w.AddUint32("k", 1) }, `metadata key "k" added twice`},
		{"invalid value type", func(w *Writer) { w.Add("k", Value{Type: 13}) }, "invalid value type type(13)"},
		{"invalid element type", func(w *Writer) { w.Add("k", Value{Type: Array, ElemType: 40}) }, "invalid array element type type(40)"},
		{"alignment not a power of two", func(w *Writer) { w.AddUint32("general.alignment", 48) }, "general.alignment is uint32 48"},
		{"alignment as string", func(w *Writer) { w.AddString("general.alignment", "32") }, "want a power of two"},
		{"too deep", func(w *Writer) {
			v := StringsValue([]string{"x"})
			for range maxArrayDepth {
				v = ArrayValue(Array, []Value{v})
			}
			w.Add("deep", v)
		}, "arrays nested more than 8 deep"},
	}
	for _, tt := range kvTests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter()
			tt.add(w)
			_, err := w.WriteTo(&bytes.Buffer{})
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, w.WriteFile(filepath.Join(t.TempDir(), "x.gguf")), tt.wantErr)
		})
	}
}

func TestWriterDepthLimitMatchesReader(t *testing.T) {
	t.Parallel()

	v := StringsValue([]string{"x"})
	for range maxArrayDepth - 1 {
		v = ArrayValue(Array, []Value{v})
	}
	w := NewWriter()
	w.Add("deepest", v)
	f, err := Parse("deep.gguf", writeBytes(t, w))
	require.NoError(t, err, "the deepest nesting the writer accepts must parse")
	got, _ := f.Lookup("deepest")
	require.True(t, v.Equal(got))
}

func TestWriteFile(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	path := filepath.Join(dir, "model.gguf")
	require.NoError(t, os.WriteFile(path, []byte("old contents"), 0o644))

	w := NewWriter()
	w.AddString("general.architecture", "llama")
	require.NoError(t, w.AddTensor("w", F32, []uint64{2}, make([]byte, 8)))
	require.NoError(t, w.WriteFile(path))

	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, writeBytes(t, w), got)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")

	require.Error(t, w.WriteFile(filepath.Join(dir, "no-such-dir", "x.gguf")))
}
