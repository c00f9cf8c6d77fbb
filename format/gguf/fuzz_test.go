package gguf

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse feeds arbitrary bytes to Parse. Parse must not panic; when it
// accepts the input, every tensor must be readable, every value printable,
// and writing the contents back out must give a file that parses to the
// same contents.
func FuzzParse(f *testing.F) {
	small := smallFile(f)
	f.Add(small)
	f.Add(small[:len(small)/2])
	w := NewWriter()
	for _, kv := range everyValue() {
		w.Add(kv.Key, kv.Value)
	}
	f.Add(writeBytes(f, w))
	f.Add([]byte(header(1, 0, 0)))
	f.Add([]byte(header(3, 0, math.MaxUint64)))
	f.Add([]byte(header(3, 1, 0).tensorInfo("w", []uint64{8}, F32, 4).pad(32).zeros(64)))
	f.Add([]byte(header(3, 1, 0).tensorInfo("w", []uint64{1 << 32, 1 << 32}, F32, 0).pad(32)))
	f.Add([]byte(header(3, 0, 1).str("a").u32(uint32(Array)).u32(uint32(Array)).u64(1).u32(uint32(String)).u64(1).str("x")))
	f.Add([]byte(header(3, 1, 1).str("general.alignment").u32(uint32(Uint32)).u32(8).tensorInfo("w", []uint64{32}, Q8_0, 0).pad(8).zeros(34)))

	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.gguf", data)
		if err != nil {
			return
		}
		checkParsed(t, file)

		// Round trip through the writer.
		w := NewWriter()
		for _, kv := range file.Metadata {
			w.Add(kv.Key, kv.Value)
		}
		for i := range file.Tensors {
			ti := &file.Tensors[i]
			d, err := file.TensorData(ti)
			require.NoErrorf(t, err, "TensorData(%q)", ti.Name)
			require.NoError(t, w.AddTensor(ti.Name, ti.Type, ti.Dims, d), "writer refused a tensor the reader accepted")
		}
		var out bytes.Buffer
		_, err = w.WriteTo(&out)
		require.NoError(t, err, "writer refused metadata the reader accepted")
		again, err := Parse("rewritten.gguf", out.Bytes())
		require.NoError(t, err, "rewritten file does not parse")
		require.Len(t, again.Metadata, len(file.Metadata), "rewritten file's keys")
		require.Len(t, again.Tensors, len(file.Tensors), "rewritten file's tensors")
		for i, kv := range file.Metadata {
			require.Falsef(t, again.Metadata[i].Key != kv.Key || !again.Metadata[i].Value.Equal(kv.Value), "metadata %d changed: %q=%v became %q=%v", i, kv.Key, kv.Value, again.Metadata[i].Key, again.Metadata[i].Value)
		}
		for i := range file.Tensors {
			a, b := &file.Tensors[i], &again.Tensors[i]
			da, _ := file.TensorData(a)
			db, err := again.TensorData(b)
			require.Falsef(t, err != nil || a.Name != b.Name || a.Type != b.Type || a.Size != b.Size || !bytes.Equal(da, db), "tensor %q changed in the round trip", a.Name)
		}
	})
}

// checkParsed checks the invariants of a File that Parse accepted.
func checkParsed(t *testing.T, f *File) {
	require.Falsef(t, f.Version != 2 && f.Version != 3, "accepted version %d", f.Version)
	require.Falsef(t, f.Alignment == 0 || f.Alignment&(f.Alignment-1) != 0 || f.DataOffset%f.Alignment != 0, "alignment %d, data offset %d", f.Alignment, f.DataOffset)
	for _, kv := range f.Metadata {
		_ = kv.Value.String()
		v, ok := f.Lookup(kv.Key)
		require.Truef(t, ok && v.Equal(kv.Value), "Lookup(%q) disagrees with Metadata", kv.Key)
		_, _ = f.Strings(kv.Key)
		_, _ = f.Float32s(kv.Key)
		_, _ = f.Int32s(kv.Key)
		_, _ = f.Uint(kv.Key)
		_, _ = f.Float(kv.Key)
		_, _ = kv.Value.Array()
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		require.Falsef(t, len(ti.Dims) < 1 || len(ti.Dims) > MaxDims || !ti.Type.Known(), "accepted tensor %q with dims %v type %s", ti.Name, ti.Dims, ti.Type)
		size, err := ti.Type.RowBytes(ti.Elements())
		require.Falsef(t, err != nil || size != ti.Size, "tensor %q size %d, RowBytes gives %d, %v", ti.Name, ti.Size, size, err)
		d, err := f.TensorData(ti)
		require.Falsef(t, err != nil || uint64(len(d)) != ti.Size, "TensorData(%q) = %d bytes, %v; want %d", ti.Name, len(d), err, ti.Size)
		got, ok := f.Tensor(ti.Name)
		require.Truef(t, ok && got == ti, "Tensor(%q) does not find it", ti.Name)
	}
}
