package model_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model"
)

// TestQuantizeGGUFRefusesOverflow: a matrix whose values do not fit a block type's fp16
// scales, or that holds an infinity, is refused with the file, the tensor, the row and the
// type named, as llama-quantize refuses to write such a tensor; the k types, whose values
// are products of two stored scales, hold what the 32-value types cannot; a target that
// is no block type is refused too.
func TestQuantizeGGUFRefusesOverflow(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		value  float32
		refuse []gguf.TensorType
		accept []gguf.TensorType
	}{
		{1e7, []gguf.TensorType{gguf.Q8_0, gguf.Q4_0, gguf.Q4_1, gguf.Q5_0, gguf.Q5_1}, []gguf.TensorType{gguf.Q4_K, gguf.Q6_K, gguf.F16}},
		{float32(math.Inf(1)), []gguf.TensorType{gguf.Q8_0, gguf.Q4_K, gguf.Q6_K, gguf.Q2_K}, nil},
	} {
		in := withValue(t, "blk.1.ffn_up.weight", 3*256+17, c.value)
		for _, typ := range c.refuse {
			_, _, err := model.QuantizeGGUF(in, typ)
			require.Error(t, err, "%s %g", typ, c.value)
			require.Contains(t, err.Error(), `tensor "blk.1.ffn_up.weight" row 3`, "%s", typ)
			require.Contains(t, err.Error(), "does not fit "+typ.String(), "%s", typ)
			require.Contains(t, err.Error(), "edited.gguf", "%s", typ)
		}
		for _, typ := range c.accept {
			_, _, err := model.QuantizeGGUF(in, typ)
			require.NoError(t, err, "%s %g", typ, c.value)
		}
	}
	_, _, err := model.QuantizeGGUF(withValue(t, "blk.0.attn_q.weight", 0, 1), gguf.IQ4_NL)
	require.ErrorContains(t, err, "cannot convert")
}

// withValue returns quantizeTestShape's model with value v at index i of tensor name.
func withValue(t *testing.T, name string, i int, v float32) *gguf.File {
	t.Helper()
	w, err := quantizeTestShape.Writer()
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = w.WriteTo(&buf)
	require.NoError(t, err)
	f, err := gguf.Parse("synth", buf.Bytes())
	require.NoError(t, err)
	out := gguf.NewWriter()
	for _, kv := range f.Metadata {
		out.Add(kv.Key, kv.Value)
	}
	for k := range f.Tensors {
		ti := &f.Tensors[k]
		data, err := f.TensorData(ti)
		require.NoError(t, err)
		if ti.Name == name {
			data = bytes.Clone(data)
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
		require.NoError(t, out.AddTensor(ti.Name, ti.Type, ti.Dims, data))
	}
	buf.Reset()
	_, err = out.WriteTo(&buf)
	require.NoError(t, err)
	in, err := gguf.Parse("edited.gguf", buf.Bytes())
	require.NoError(t, err)
	return in
}
