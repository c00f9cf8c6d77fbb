package hf_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/safetensors"
	"github.com/kvref/kvref/model/hf"
	"github.com/kvref/kvref/model/synth"
)

// writeVariant writes a synthetic variant as a Hugging Face directory.
func writeVariant(t *testing.T, name string) string {
	t.Helper()
	m, err := synth.Variants[name].Model()
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, hf.Write(dir, m, hf.WriteOptions{}))
	return dir
}

// rewriteTensors rewrites dir/model.safetensors: rename maps each name to its new name
// ("" drops it); extra tensors are added.
func rewriteTensors(t *testing.T, dir string, rename func(string) string, extra ...safetensors.Tensor) {
	t.Helper()
	set, err := safetensors.OpenDir(dir)
	require.NoError(t, err)
	var out []safetensors.Tensor
	for _, name := range set.Names() {
		info, _, _ := set.Tensor(name)
		data, err := set.TensorData(name)
		require.NoError(t, err)
		if n := rename(name); n != "" {
			out = append(out, safetensors.Tensor{Name: n, DType: info.DType, Shape: info.Shape, Data: append([]byte(nil), data...)})
		}
	}
	require.NoError(t, set.Close())
	out = append(out, extra...)
	f, err := os.Create(filepath.Join(dir, "model.safetensors"))
	require.NoError(t, err)
	require.NoError(t, safetensors.Write(f, out, map[string]string{"format": "pt"}))
	require.NoError(t, f.Close())
}

// TestGemma3ConditionalGenerationTextLoadsAlone: a Gemma3ForConditionalGeneration directory
// (config in text_config, text tensors under language_model.model. as the hub's checkpoints
// have them, or model.language_model. as transformers 4.52 and later save them, a vision
// tower beside) loads as its text model, and computes what the Gemma3ForCausalLM directory
// of the same weights computes, bit for bit.
func TestGemma3ConditionalGenerationTextLoadsAlone(t *testing.T) {
	t.Parallel()

	tokens := []int{2, 40, 41, 42, 100, 200, 7, 7, 9, 250, 3, 77, 78, 79, 80, 81, 82, 83, 84, 85}
	causal := writeVariant(t, "gemma3")
	cm, err := hf.Load(causal)
	require.NoError(t, err)
	defer cm.Close()
	want := logitsOf(t, cm, tokens)

	for _, layout := range []struct{ prefix, lmHead string }{{"language_model.model.", "language_model.lm_head.weight"}, {"model.language_model.", "lm_head.weight"}} {
		t.Run(layout.prefix, func(t *testing.T) {
			dir := writeVariant(t, "gemma3")
			data, err := os.ReadFile(filepath.Join(dir, "config.json"))
			require.NoError(t, err)
			var text map[string]any
			require.NoError(t, json.Unmarshal(data, &text))
			delete(text, "architectures")
			cfg := map[string]any{"architectures": []string{"Gemma3ForConditionalGeneration"}, "model_type": "gemma3", "text_config": text,
				"eos_token_id": []int{1, 6}, "torch_dtype": "float32", "mm_tokens_per_image": 256,
				"vision_config": map[string]any{"model_type": "siglip_vision_model", "hidden_size": 8}}
			out, err := json.Marshal(cfg)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), out, 0o644))
			vision := safetensors.Tensor{Name: "vision_tower.vision_model.post_layernorm.weight", DType: safetensors.F32, Shape: []int{2}, Data: make([]byte, 8)}
			// A copy of the tied classifier, as some checkpoints carry it: ignored when tied.
			rewriteTensors(t, dir, func(n string) string { return strings.Replace(n, "model.", layout.prefix, 1) }, vision)
			m, err := hf.Load(dir)
			require.NoError(t, err)
			defer m.Close()
			require.Equal(t, cm.Config, m.Config)
			d, bitwise := maxDiff(want, logitsOf(t, m, tokens))
			require.True(t, bitwise, "differs by %g", d)
		})
	}
}

// TestGemmaDirectoryMissingNorm: a Gemma directory without one of its four per-layer norms
// is refused naming the tensor.
func TestGemmaDirectoryMissingNorm(t *testing.T) {
	t.Parallel()

	for _, name := range []string{"model.layers.1.post_feedforward_layernorm.weight", "model.layers.0.pre_feedforward_layernorm.weight",
		"model.layers.2.self_attn.k_norm.weight", "model.norm.weight"} {
		dir := writeVariant(t, "gemma3")
		rewriteTensors(t, dir, func(n string) string {
			if n == name {
				return ""
			}
			return n
		})
		_, err := hf.Load(dir)
		require.ErrorContains(t, err, `missing tensor "`+name+`"`)
	}
}

// TestLlamaConfigSmallTruths: config.json values that used to load silently are refused
// with the key named: a rope_theta of 0 (it became 10000; GGUF refuses 0), a model_type or
// torch_dtype of another model, and a NaN (Python's json writes it; JSON has none).
func TestLlamaConfigSmallTruths(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		key   string
		value any
		want  []string
	}{
		{"rope_theta", 0, []string{"rope_theta is 0", "finite number > 0"}},
		{"model_type", "gpt2", []string{`model_type is "gpt2"`, "LlamaForCausalLM", `"llama"`}},
		{"torch_dtype", "int3", []string{`torch_dtype is "int3"`, "float32, float16, bfloat16"}},
		{"dtype", "int3", []string{`dtype is "int3"`}},
	} {
		dir := writeTiny(t)
		editJSON(t, dir, "config.json", tc.key, tc.value)
		_, err := hf.Load(dir)
		require.Error(t, err, tc.key)
		for _, w := range tc.want {
			require.Contains(t, err.Error(), w)
		}
	}
	// A NaN anywhere is named by its key.
	dir := writeTiny(t)
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"rms_norm_eps": 0.000009999999747378752`)
	bad := strings.Replace(string(data), `"rms_norm_eps": 0.000009999999747378752`, `"rms_norm_eps": NaN`, 1)
	require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
	_, err = hf.Load(dir)
	require.ErrorContains(t, err, "in the value of rms_norm_eps")
	require.ErrorContains(t, err, "NaN is not JSON")
	// Absent rope_theta is still transformers' default, and the written names load.
	dir = writeTiny(t)
	editJSON(t, dir, "config.json", "model_type", "llama")
	m, err := hf.Load(dir)
	require.NoError(t, err)
	require.Equal(t, 10000.0, m.Config.RopeBase)
	m.Close()
}
