package safetensors

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse feeds arbitrary bytes to Parse. Parse must not panic; when it
// accepts the input, every tensor must be readable with the size its shape
// says, and writing the contents back out must give a file that parses to the
// same contents and is itself a fixed point of parse-and-write.
func FuzzParse(f *testing.F) {
	f.Add(encode(f, sampleTensors(), map[string]string{"format": "pt"}))
	f.Add(encode(f, nil, nil))
	f.Add(encode(f, sampleTensors()[:1], nil))
	f.Add(rawFile(`{"a":`+info(`"U8"`, `[8]`, `[0,8]`)+`,"b":`+info(`"U8"`, `[4]`, `[4,8]`)+`}`, seq(0, 8)))
	f.Add(rawFile(`{"w":`+info(`"F32"`, `[4294967296,4294967296]`, `[0,8]`)+`}`, seq(0, 8)))
	f.Add(rawFile(`{"__metadata__":{"k":"a","k":"b"}}`, nil))
	f.Add(rawFile(`{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"extra":[1,{"x":null}]}}`, seq(0, 1)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.safetensors", data)
		if err != nil {
			require.False(t, file != nil, "non-nil file with an error")
			return
		}
		var tensors []Tensor
		for _, info := range file.Tensors {
			d, err := file.TensorData(info.Name)
			require.NoErrorf(t, err, "TensorData(%q)", info.Name)
			n, ok := elements(info.Shape)
			require.Falsef(t, !ok || n*uint64(info.DType.Size()) != uint64(len(d)), "tensor %q: %d bytes for shape %v of %s", info.Name, len(d), info.Shape, info.DType)
			tensors = append(tensors, Tensor{Name: info.Name, DType: info.DType, Shape: info.Shape, Data: d})
		}
		var out bytes.Buffer
		require.NoError(t, Write(&out, tensors, file.Metadata), "writer refused what the reader accepted")
		again, err := Parse("rewritten.safetensors", out.Bytes())
		require.NoError(t, err, "rewritten file does not parse")
		require.Falsef(t, !maps.Equal(file.Metadata, again.Metadata) || (file.Metadata == nil) != (again.Metadata == nil), "metadata %v, rewritten %v", file.Metadata, again.Metadata)
		require.Falsef(t, len(again.Tensors) != len(file.Tensors), "%d tensors, rewritten %d", len(file.Tensors), len(again.Tensors))
		for i, a := range again.Tensors {
			b := file.Tensors[i]
			da, _ := again.TensorData(a.Name)
			db, _ := file.TensorData(b.Name)
			require.Falsef(t, a.Name != b.Name || a.DType != b.DType || !slices.Equal(a.Shape, b.Shape) || !bytes.Equal(da, db), "tensor %q changed in the rewrite", b.Name)
		}
		var twice bytes.Buffer
		require.NoError(t, Write(&twice, tensors, again.Metadata))
		require.True(t, bytes.Equal(twice.Bytes(), out.Bytes()), "writing is not deterministic")
	})
}
