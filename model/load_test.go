package model_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/half"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// rewrite copies a GGUF file, letting edit change metadata values (return false to drop a
// key) and tensors (return false to drop one).
func rewrite(t *testing.T, src *gguf.File, editKV func(key string, v gguf.Value) (gguf.Value, bool),
	editTensor func(info *gguf.TensorInfo, data []byte) (gguf.TensorType, []byte, bool)) string {
	t.Helper()
	w := gguf.NewWriter()
	for _, kv := range src.Metadata {
		v, keep := kv.Value, true
		if editKV != nil {
			v, keep = editKV(kv.Key, kv.Value)
		}
		if keep {
			w.Add(kv.Key, v)
		}
	}
	for i := range src.Tensors {
		info := &src.Tensors[i]
		data, err := src.TensorData(info)
		require.NoError(t, err)
		typ, keep := info.Type, true
		if editTensor != nil {
			typ, data, keep = editTensor(info, data)
		}
		if keep {
			require.NoError(t, w.AddTensor(info.Name, typ, info.Dims, data))
		}
	}
	path := filepath.Join(t.TempDir(), "edited.gguf")
	require.NoError(t, w.WriteFile(path))
	return path
}

func tinyFile(t *testing.T) (string, *gguf.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, synth.Tiny.WriteFile(path))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return path, f
}

func TestLoadGGUFRejectsBadModels(t *testing.T) {
	t.Parallel()

	path, f := tinyFile(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	keepAll := func(key string, v gguf.Value) (gguf.Value, bool) { return v, true }

	cases := []struct {
		name string
		file func() string
		want []string // substrings of the error
	}{
		{"truncated", func() string {
			p := filepath.Join(t.TempDir(), "cut.gguf")
			require.NoError(t, os.WriteFile(p, data[:len(data)-100], 0o644))
			return p
		}, []string{"cut.gguf"}},
		{"wrong magic", func() string {
			p := filepath.Join(t.TempDir(), "magic.gguf")
			bad := append([]byte("GGML"), data[4:]...)
			require.NoError(t, os.WriteFile(p, bad, 0o644))
			return p
		}, []string{"magic"}},
		{"unsupported architecture", func() string {
			return rewrite(t, f, func(key string, v gguf.Value) (gguf.Value, bool) {
				if key == "general.architecture" {
					return gguf.StringValue("mamba"), true
				}
				return v, true
			}, nil)
		}, []string{`unsupported architecture "mamba"`, "llama"}},
		{"missing key", func() string {
			return rewrite(t, f, func(key string, v gguf.Value) (gguf.Value, bool) {
				return v, key != "llama.block_count"
			}, nil)
		}, []string{"llama.block_count"}},
		{"missing tensor", func() string {
			return rewrite(t, f, keepAll, func(info *gguf.TensorInfo, data []byte) (gguf.TensorType, []byte, bool) {
				return info.Type, data, info.Name != "blk.1.ffn_up.weight"
			})
		}, []string{`missing tensor "blk.1.ffn_up.weight"`}},
		{"unsupported tensor type", func() string {
			return rewrite(t, f, keepAll, func(info *gguf.TensorInfo, data []byte) (gguf.TensorType, []byte, bool) {
				if info.Name == "blk.0.attn_q.weight" {
					n, err := gguf.IQ4_NL.RowBytes(info.Elements())
					require.NoError(t, err)
					return gguf.IQ4_NL, make([]byte, n), true
				}
				return info.Type, data, true
			})
		}, []string{`"blk.0.attn_q.weight"`, "IQ4_NL", "supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q5_K"}},
		{"heads do not divide kv heads", func() string {
			return rewrite(t, f, func(key string, v gguf.Value) (gguf.Value, bool) {
				if key == "llama.attention.head_count_kv" {
					return gguf.Uint32Value(3), true
				}
				return v, true
			}, nil)
		}, []string{"4 query heads", "3 KV heads"}},
		{"absurd dimension", func() string {
			return rewrite(t, f, func(key string, v gguf.Value) (gguf.Value, bool) {
				if key == "llama.embedding_length" {
					return gguf.Uint32Value(1 << 30), true
				}
				return v, true
			}, nil)
		}, []string{"token_embd.weight"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := model.LoadGGUF(tc.file())
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestF16AndBF16WeightsLoadAndRun(t *testing.T) {
	t.Parallel()

	_, f := tinyFile(t)
	ref, err := model.FromGGUF(f, "f32")
	require.NoError(t, err)
	for _, typ := range []gguf.TensorType{gguf.F16, gguf.BF16} {
		t.Run(typ.String(), func(t *testing.T) {
			path := rewrite(t, f, nil, func(info *gguf.TensorInfo, data []byte) (gguf.TensorType, []byte, bool) {
				if len(info.Dims) != 2 {
					return info.Type, data, true
				}
				out := make([]byte, len(data)/2)
				m, err := model.NewMatrix(info.Name, int(info.Dims[1]), int(info.Dims[0]), gguf.F32, data)
				require.NoError(t, err)
				for r := 0; r < m.Rows; r++ {
					for c, v := range m.Row(r, nil) {
						h := halfBits(typ, v)
						out[2*(r*m.Cols+c)], out[2*(r*m.Cols+c)+1] = byte(h), byte(h>>8)
					}
				}
				return typ, out, true
			})
			m, err := model.LoadGGUF(path)
			require.NoError(t, err)
			defer m.Close()
			require.Less(t, m.Weights.Bytes(), ref.Weights.Bytes())
			tokens := []int{1, 72, 101, 108, 108, 111}
			r16, rf := model.NewRunner(m, 1), model.NewRunner(ref, 1)
			defer r16.Close()
			defer rf.Close()
			got, err := r16.Reference(tokens, quant.F32, quant.F32, 0)
			require.NoError(t, err)
			want, err := rf.Reference(tokens, quant.F32, quant.F32, 0)
			require.NoError(t, err)
			for p := range got {
				require.InDeltaSlice(t, toF64(want[p]), toF64(got[p]), 0.1, "position %d", p)
			}
		})
	}
}

func halfBits(typ gguf.TensorType, v float32) uint16 {
	if typ == gguf.F16 {
		return half.F32ToF16(v)
	}
	return half.F32ToBF16(v)
}

func toF64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
