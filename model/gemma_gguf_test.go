package model_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
)

// gemmaFile writes a synthetic Gemma variant as GGUF and opens it.
func gemmaFile(t *testing.T, variant string) *gguf.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), variant+".gguf")
	require.NoError(t, synth.Variants[variant].WriteFile(path))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// TestLoadGemmaGGUF: what a gemma2 and a gemma3 file mean, read as llama.cpp reads them.
func TestLoadGemmaGGUF(t *testing.T) {
	t.Parallel()

	g2, err := model.FromGGUF(gemmaFile(t, "gemma2"), "gemma2")
	require.NoError(t, err)
	c := g2.Config
	require.Equal(t, []bool{true, false, true, false}, c.SlidingLayers, "gemma2 alternates, starting with a sliding layer")
	require.Equal(t, []int{8, 0, 8, 0}, []int{c.Window(0), c.Window(1), c.Window(2), c.Window(3)})
	require.Equal(t, 50.0, c.AttnSoftCap)
	require.Equal(t, 30.0, c.FinalSoftCap)
	require.Equal(t, 32.0, c.QueryScalar, "the head dim, as llama.cpp takes it")
	require.Nil(t, c.LocalRope, "gemma2 has one RoPE")
	require.True(t, c.Tied && c.EmbedScale && c.PostNorms && !c.QKNorm)
	require.Equal(t, model.ActivationGELUTanh, c.Activation)
	require.Equal(t, 32, c.HeadDim, "key_length, not dim/heads")

	g3, err := model.FromGGUF(gemmaFile(t, "gemma3"), "gemma3")
	require.NoError(t, err)
	c = g3.Config
	require.Equal(t, model.GemmaPattern(7, 6), c.SlidingLayers)
	require.Equal(t, []bool{true, true, true, true, true, false, true}, c.SlidingLayers, "every sixth layer is global")
	require.Equal(t, model.LayerSpec{Window: 8, Rope: model.Rope{Base: 10000}}, c.LayerSpec(0), "sliding: base 10000, unscaled")
	require.Equal(t, model.LayerSpec{Window: 0, Rope: model.Rope{Base: 1e6, Scaling: model.RopeScaling{Type: "linear", Factor: 8}}}, c.LayerSpec(5),
		"global: the file's base and scaling")
	require.True(t, c.QKNorm)
	require.Zero(t, c.AttnSoftCap)
	require.Zero(t, c.FinalSoftCap)
	require.Len(t, g3.Weights.Layers[6].QNorm, 32)

	// The 27B layer counts take the query scale from embedding_length/head_count.
	require.Equal(t, 144, model.GGUFQueryScalar("gemma2", 46, 4608, 32, 128))
	require.Equal(t, 168, model.GGUFQueryScalar("gemma3", 62, 5376, 32, 128))
	require.Equal(t, 256, model.GGUFQueryScalar("gemma3", 26, 1152, 4, 256))
}

// TestLoadGemmaGGUFRejectsBadFiles: an inconsistent pattern, a window of 0 or longer than the
// context, a missing norm, a soft-cap of 0 or NaN, and what llama.cpp would read otherwise
// are refused with the key or tensor named; architectures kvref cannot run say so.
func TestLoadGemmaGGUFRejectsBadFiles(t *testing.T) {
	t.Parallel()

	setKey := func(f *gguf.File, key string, v gguf.Value) string {
		return rewrite(t, f, func(k string, old gguf.Value) (gguf.Value, bool) {
			if k == key {
				return v, true
			}
			return old, true
		}, nil)
	}
	withKey := func(f *gguf.File, key string, v gguf.Value) string {
		w := gguf.NewWriter()
		for _, kv := range f.Metadata {
			w.Add(kv.Key, kv.Value)
		}
		w.Add(key, v)
		for i := range f.Tensors {
			info := &f.Tensors[i]
			data, err := f.TensorData(info)
			require.NoError(t, err)
			require.NoError(t, w.AddTensor(info.Name, info.Type, info.Dims, data))
		}
		path := filepath.Join(t.TempDir(), "with.gguf")
		require.NoError(t, w.WriteFile(path))
		return path
	}
	dropTensor := func(f *gguf.File, name string) string {
		return rewrite(t, f, nil, func(info *gguf.TensorInfo, data []byte) (gguf.TensorType, []byte, bool) {
			return info.Type, data, info.Name != name
		})
	}
	g2, g3 := gemmaFile(t, "gemma2"), gemmaFile(t, "gemma3")
	bools := func(b ...bool) gguf.Value {
		var vs []gguf.Value
		for _, x := range b {
			vs = append(vs, gguf.BoolValue(x))
		}
		return gguf.ArrayValue(gguf.Bool, vs)
	}
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name string
		file string
		want []string
	}{
		{"window 0", setKey(g2, "gemma2.attention.sliding_window", gguf.Uint32Value(0)), []string{"gemma2.attention.sliding_window", "is 0"}},
		{"window past the context", setKey(g3, "gemma3.attention.sliding_window", gguf.Uint32Value(513)), []string{"gemma3.attention.sliding_window", "513", "context of 512"}},
		{"pattern of the wrong length", withKey(g2, "gemma2.attention.sliding_window_pattern", bools(true, false)), []string{"gemma2.attention.sliding_window_pattern", "2 entries for 4 layers"}},
		{"pattern llama.cpp does not compute", withKey(g3, "gemma3.attention.sliding_window_pattern", bools(true, true, false, true, true, false, true)),
			[]string{"gemma3.attention.sliding_window_pattern", "layer 2 global", "sliding", "llama.cpp ignores the key"}},
		{"pattern period 3", withKey(g3, "gemma3.attention.sliding_window_pattern", gguf.Uint32Value(3)), []string{"gemma3.attention.sliding_window_pattern", "layer 2 global"}},
		{"pattern period 0", withKey(g3, "gemma3.attention.sliding_window_pattern", gguf.Uint32Value(0)), []string{"gemma3.attention.sliding_window_pattern", "is 0"}},
		{"missing post-attention norm", dropTensor(g2, "blk.1.post_attention_norm.weight"), []string{`missing tensor "blk.1.post_attention_norm.weight"`}},
		{"missing post-ffw norm", dropTensor(g3, "blk.3.post_ffw_norm.weight"), []string{`missing tensor "blk.3.post_ffw_norm.weight"`}},
		{"missing k norm", dropTensor(g3, "blk.0.attn_k_norm.weight"), []string{`missing tensor "blk.0.attn_k_norm.weight"`}},
		{"attention soft-cap 0", setKey(g2, "gemma2.attn_logit_softcapping", gguf.Float32Value(0)), []string{"gemma2.attn_logit_softcapping", "is 0"}},
		{"final soft-cap NaN", setKey(g2, "gemma2.final_logit_softcapping", gguf.Float32Value(nan)), []string{"gemma2.final_logit_softcapping", "is NaN"}},
		{"final soft-cap negative", withKey(g3, "gemma3.final_logit_softcapping", gguf.Float32Value(-3)), []string{"gemma3.final_logit_softcapping", "is -3"}},
		{"attention soft-cap in gemma3", withKey(g3, "gemma3.attn_logit_softcapping", gguf.Float32Value(50)), []string{"gemma3.attn_logit_softcapping", "no attention soft-capping"}},
		{"local base llama.cpp ignores", withKey(g3, "gemma3.rope.freq_base_swa", gguf.Float32Value(20000)), []string{"gemma3.rope.freq_base_swa", "base 10000"}},
		{"value length", setKey(g2, "gemma2.attention.value_length", gguf.Uint32Value(16)), []string{"gemma2.attention.value_length = 16", "key_length = 32"}},
		{"gpt-oss", setKey(g2, "general.architecture", gguf.StringValue("gpt-oss")), []string{"cannot run gpt-oss models", "mixture of experts", "MXFP4", "gemma3"}},
		{"gemma3n", setKey(g3, "general.architecture", gguf.StringValue("gemma3n")), []string{"cannot run gemma3n models", "per-layer embeddings"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := model.LoadGGUF(tc.file)
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
	// A pattern key that says what llama.cpp computes is fine, as a list or as the period.
	for _, v := range []gguf.Value{bools(true, true, true, true, true, false, true), gguf.Uint32Value(6)} {
		m, err := model.LoadGGUF(withKey(g3, "gemma3.attention.sliding_window_pattern", v))
		require.NoError(t, err)
		m.Close()
	}
	// A gemma3 file without a window has no sliding layers (llama.cpp's converter omits it
	// for an all-global model): every layer global, one RoPE.
	m, err := model.LoadGGUF(rewrite(t, g3, func(k string, v gguf.Value) (gguf.Value, bool) {
		return v, k != "gemma3.attention.sliding_window"
	}, nil))
	require.NoError(t, err)
	defer m.Close()
	require.Zero(t, m.Config.SlidingCount())
	require.Equal(t, m.Config.LayerSpec(0), m.Config.LayerSpec(5))
}
