package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// rawFile assembles a file from a header (written as given) and a data buffer.
func rawFile(header string, data []byte) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	out = append(out, header...)
	return append(out, data...)
}

// f32s encodes float32 values.
func f32s(xs ...float32) []byte {
	var out []byte
	for _, x := range xs {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

// seq returns n bytes 0, 1, 2, ... (mod 256) starting at start.
func seq(start, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(start + i)
	}
	return out
}

// sampleTensors is a mix of dtypes, shapes (a scalar and an empty tensor
// included) and awkward names.
func sampleTensors() []Tensor {
	return []Tensor{
		{Name: "model.embed_tokens.weight", DType: BF16, Shape: []int{3, 4}, Data: seq(0, 24)},
		{Name: "model.norm.weight", DType: F32, Shape: []int{4}, Data: f32s(1, 2, 3, 4)},
		{Name: "lm_head.weight", DType: F16, Shape: []int{3, 4}, Data: seq(100, 24)},
		{Name: "counter", DType: I64, Shape: []int{}, Data: seq(7, 8)},
		{Name: "mask", DType: BOOL, Shape: []int{5}, Data: []byte{1, 0, 1, 1, 0}},
		{Name: "empty", DType: F32, Shape: []int{0, 4}, Data: nil},
		{Name: "odd \"name\"\n\t\\ é <&> \x01", DType: U8, Shape: []int{3}, Data: []byte{9, 8, 7}},
	}
}

// encode writes tensors and metadata to bytes.
func encode(t testing.TB, tensors []Tensor, metadata map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, tensors, metadata))
	return buf.Bytes()
}

// writeFile writes data to dir/name and returns the path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}
