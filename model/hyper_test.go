package model_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model"
)

// TestLoadGGUFRejectsHyperParametersThatGiveNaN: every one of these used to load and then
// give NaN logits (or, for the BOS id, silently become token 1); each must now be refused at
// load with an error naming the key or tensor and what is wrong.
func TestLoadGGUFRejectsHyperParametersThatGiveNaN(t *testing.T) {
	t.Parallel()

	_, f := tinyFile(t)
	setKey := func(key string, value gguf.Value) func() string {
		return func() string {
			return rewrite(t, f, func(k string, v gguf.Value) (gguf.Value, bool) {
				if k == key {
					return value, true
				}
				return v, true
			}, nil)
		}
	}
	const eps, base = "llama.attention.layer_norm_rms_epsilon", "llama.rope.freq_base"
	nan := float32(math.NaN())
	cases := []struct {
		name string
		file func() string
		want []string
	}{
		{"eps NaN", setKey(eps, gguf.Float32Value(nan)), []string{eps, "is NaN"}},
		{"eps +Inf", setKey(eps, gguf.Float32Value(float32(math.Inf(1)))), []string{eps, "is +Inf"}},
		{"eps -Inf", setKey(eps, gguf.Float32Value(float32(math.Inf(-1)))), []string{eps, "is -Inf"}},
		{"eps 0", setKey(eps, gguf.Float32Value(0)), []string{eps, "is 0"}},
		{"eps negative", setKey(eps, gguf.Float32Value(-0.5)), []string{eps, "is -0.5"}},
		{"eps 1e300", setKey(eps, gguf.Float64Value(1e300)), []string{eps, "is 1e+300"}},
		{"eps below float32", setKey(eps, gguf.Float64Value(1e-60)), []string{eps, "float32"}},
		{"freq_base NaN", setKey(base, gguf.Float32Value(nan)), []string{base, "is NaN"}},
		{"freq_base 0", setKey(base, gguf.Float32Value(0)), []string{base, "is 0"}},
		{"freq_base negative", setKey(base, gguf.Float32Value(-10000)), []string{base, "is -10000"}},
		{"freq_base +Inf", setKey(base, gguf.Float32Value(float32(math.Inf(1)))), []string{base, "is +Inf"}},
		{"bos id out of range", setKey("tokenizer.ggml.bos_token_id", gguf.Uint32Value(600)), []string{"tokenizer.ggml.bos_token_id", "600", "259 tokens"}},
		{"eos id out of range", setKey("tokenizer.ggml.eos_token_id", gguf.Uint32Value(259)), []string{"tokenizer.ggml.eos_token_id", "259"}},
		{"NaN norm weight", func() string {
			return rewrite(t, f, nil, func(info *gguf.TensorInfo, data []byte) (gguf.TensorType, []byte, bool) {
				if info.Name == "blk.1.ffn_norm.weight" {
					data = append([]byte(nil), data...)
					binary.LittleEndian.PutUint32(data[3*4:], math.Float32bits(nan))
				}
				return info.Type, data, true
			})
		}, []string{`"blk.1.ffn_norm.weight"`, "NaN at index 3"}},
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
	// A "none" id (-1 as uint32) keeps llama.cpp's default, as before.
	m, err := model.LoadGGUF(setKey("tokenizer.ggml.bos_token_id", gguf.Uint32Value(math.MaxUint32))())
	require.NoError(t, err)
	defer m.Close()
}

// TestConfigValidateRejectsNonFiniteHyperParameters: the same checks guard models built in
// memory (synthetic shapes, converters), naming Config's fields.
func TestConfigValidateRejectsNonFiniteHyperParameters(t *testing.T) {
	t.Parallel()

	good := model.Config{Arch: "llama", Dim: 8, Layers: 1, Heads: 2, KVHeads: 2, HeadDim: 4, Hidden: 8, Vocab: 8, Context: 8,
		RopeBase: 10000, RopeDims: 4, NormEps: 1e-5}
	require.NoError(t, good.Validate())
	for name, edit := range map[string]func(c *model.Config){
		"norm_eps":  func(c *model.Config) { c.NormEps = float32(math.NaN()) },
		"rope_base": func(c *model.Config) { c.RopeBase = math.NaN() },
		"factor":    func(c *model.Config) { c.RopeScaling = model.RopeScaling{Type: "linear", Factor: math.Inf(1)} },
	} {
		c := good
		edit(&c)
		err := c.Validate()
		require.Error(t, err, name)
		require.Contains(t, err.Error(), name)
	}
}
