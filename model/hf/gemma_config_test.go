package hf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model"
)

// readConfigText writes text as dir/config.json and reads it.
func readConfigText(t *testing.T, text string) (model.Config, error) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(text), 0o644))
	c, _, err := readConfig(dir)
	return c, err
}

// TestHubGemmaConfigs: the hub's config.json files mean what transformers makes of them.
// Gemma 3 4B's text_config names five keys; the rest are Gemma3TextConfig's defaults.
func TestHubGemmaConfigs(t *testing.T) {
	t.Parallel()

	g270, err := readConfigText(t, gemma3_270mConfig)
	require.NoError(t, err)
	require.Equal(t, model.Config{Arch: "gemma3", Dim: 640, Layers: 18, Heads: 4, KVHeads: 1, HeadDim: 256, Hidden: 2048, Vocab: 262144,
		Context: 32768, RopeBase: 1e6, RopeDims: 256, RopeStyle: g270.RopeStyle, NormEps: 1e-6, Tied: true, QKNorm: true,
		SlidingWindow: 512, SlidingLayers: model.GemmaPattern(18, 6), LocalRope: &model.Rope{Base: 10000}, EmbedScale: true,
		PostNorms: true, Activation: model.ActivationGELUTanh, QueryScalar: 256}, g270)
	var global []int
	for l := range g270.Layers {
		if g270.Window(l) == 0 {
			global = append(global, l)
		}
	}
	require.Equal(t, []int{5, 11, 17}, global)

	g1, err := readConfigText(t, gemma3_1bConfig)
	require.NoError(t, err)
	require.Equal(t, 1152, g1.Dim)
	require.Equal(t, 6912, g1.Hidden)
	require.Equal(t, model.GemmaPattern(26, 6), g1.SlidingLayers, "sliding_window_pattern 6 alone")
	require.Equal(t, 21+1, g1.SlidingCount(), "26 layers: 4 global (5, 11, 17, 23)")
	require.Equal(t, model.LayerSpec{Window: 512, Rope: model.Rope{Base: 10000}}, g1.LayerSpec(0))
	require.Equal(t, model.LayerSpec{Rope: model.Rope{Base: 1e6}}, g1.LayerSpec(23))

	g2, err := readConfigText(t, gemma2_2bConfig)
	require.NoError(t, err)
	require.Equal(t, model.GemmaPattern(26, 2), g2.SlidingLayers)
	require.True(t, g2.SlidingLayers[0] && !g2.SlidingLayers[1], "Gemma 2 starts with a sliding layer")
	require.Equal(t, 4096, g2.SlidingWindow)
	require.Equal(t, 50.0, g2.AttnSoftCap)
	require.Equal(t, 30.0, g2.FinalSoftCap)
	require.Equal(t, 10000.0, g2.RopeBase)
	require.Nil(t, g2.LocalRope)
	require.Equal(t, 256000, g2.Vocab)
	require.False(t, g2.QKNorm)
	require.True(t, g2.Tied, "tie_word_embeddings defaults to true")

	g4, err := readConfigText(t, gemma3_4bConfig)
	require.NoError(t, err)
	require.Equal(t, model.Config{Arch: "gemma3", Dim: 2560, Layers: 34, Heads: 8, KVHeads: 4, HeadDim: 256, Hidden: 10240, Vocab: 262208,
		Context: 131072, RopeBase: 1e6, RopeScaling: model.RopeScaling{Type: "linear", Factor: 8}, RopeDims: 256, RopeStyle: g4.RopeStyle,
		NormEps: 1e-6, Tied: true, QKNorm: true, SlidingWindow: 1024, SlidingLayers: model.GemmaPattern(34, 6),
		LocalRope: &model.Rope{Base: 10000}, EmbedScale: true, PostNorms: true, Activation: model.ActivationGELUTanh, QueryScalar: 256}, g4)
}

// TestGemmaConfigRopeParameters: transformers 5 saves the RoPE per layer type; it overrides
// rope_theta and rope_local_base_freq.
func TestGemmaConfigRopeParameters(t *testing.T) {
	t.Parallel()

	text := strings.Replace(gemma3_1bConfig, `"rope_scaling": null,`,
		`"rope_parameters": {"full_attention": {"factor": 4.0, "rope_theta": 500000, "rope_type": "linear"}, "sliding_attention": {"rope_theta": 20000, "rope_type": "default"}},`, 1)
	c, err := readConfigText(t, text)
	require.NoError(t, err)
	require.Equal(t, model.Rope{Base: 500000, Scaling: model.RopeScaling{Type: "linear", Factor: 4}}, c.LayerSpec(5).Rope)
	require.Equal(t, model.Rope{Base: 20000}, c.LayerSpec(0).Rope)
}

// TestGemmaConfigRejects: a layer pattern that contradicts itself, windows of 0 or past the
// context, soft-caps of 0, and what transformers would compute otherwise, each with its key.
func TestGemmaConfigRejects(t *testing.T) {
	t.Parallel()

	edit := func(base, old, new string) string {
		require.Contains(t, base, old)
		return strings.Replace(base, old, new, 1)
	}
	layerTypes270 := `"sliding_attention",
    "full_attention",
    "sliding_attention"`
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"layer_types too short", edit(gemma3_270mConfig, `"num_hidden_layers": 18`, `"num_hidden_layers": 17`), []string{"layer_types has 18 entries for 17 layers"}},
		{"unknown layer type", edit(gemma3_270mConfig, `"full_attention",
    "sliding_attention",
    "sliding_attention",
    "sliding_attention",
    "sliding_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention"`, `"chunked_attention",
    "sliding_attention",
    "sliding_attention",
    "sliding_attention",
    "sliding_attention",
    "sliding_attention",
    "full_attention",
    "sliding_attention"`), []string{`layer_types[5] is "chunked_attention"`}},
		{"layer_types against the pattern", edit(gemma3_270mConfig, layerTypes270, `"sliding_attention",
    "sliding_attention",
    "sliding_attention"`), []string{`layer_types[5] is "sliding_attention"`, "_sliding_window_pattern 6", "full_attention"}},
		{"two periods", edit(gemma3_1bConfig, `"sliding_window_pattern": 6,`, `"sliding_window_pattern": 6, "_sliding_window_pattern": 4,`), []string{"_sliding_window_pattern is 4 but sliding_window_pattern is 6"}},
		{"period 0", edit(gemma3_1bConfig, `"sliding_window_pattern": 6,`, `"sliding_window_pattern": 0,`), []string{"sliding_window_pattern is 0"}},
		{"window 0", edit(gemma3_1bConfig, `"sliding_window": 512,`, `"sliding_window": 0,`), []string{"sliding_window is 0", "no position"}},
		{"window past the context", edit(gemma2_2bConfig, `"sliding_window": 4096,`, `"sliding_window": 9000,`), []string{"sliding_window is 9000", "context of 8192"}},
		{"window null", edit(gemma3_1bConfig, `"sliding_window": 512,`, `"sliding_window": null,`), []string{"sliding_window is null"}},
		{"attention soft-cap 0", edit(gemma2_2bConfig, `"attn_logit_softcapping": 50.0,`, `"attn_logit_softcapping": 0,`), []string{"attn_logit_softcapping is 0"}},
		{"final soft-cap negative", edit(gemma3_1bConfig, `"final_logit_softcapping": null,`, `"final_logit_softcapping": -30,`), []string{"final_logit_softcapping is -30"}},
		{"final soft-cap NaN", edit(gemma2_2bConfig, `"final_logit_softcapping": 30.0,`, `"final_logit_softcapping": NaN,`), []string{"final_logit_softcapping", "NaN is not JSON"}},
		{"attention soft-cap in Gemma 3", edit(gemma3_1bConfig, `"attn_logit_softcapping": null,`, `"attn_logit_softcapping": 50,`), []string{"attn_logit_softcapping is 50", "ignores it"}},
		{"text_config window", edit(gemma3_4bConfig, `"sliding_window": 1024`, `"sliding_window": 0`), []string{"text_config.sliding_window is 0"}},
		{"text_config NaN", edit(gemma3_4bConfig, `"factor": 8.0,`, `"factor": NaN,`), []string{"text_config.rope_scaling.factor", "NaN is not JSON"}},
		{"query scalar 0", edit(gemma3_1bConfig, `"query_pre_attn_scalar": 256,`, `"query_pre_attn_scalar": 0,`), []string{"query_pre_attn_scalar is 0"}},
		{"activation", edit(gemma2_2bConfig, `"hidden_activation": "gelu_pytorch_tanh",`, `"hidden_activation": "gelu",`), []string{`hidden_activation is "gelu"`}},
		{"rope_theta 0", edit(gemma3_1bConfig, `"rope_theta": 1000000,`, `"rope_theta": 0,`), []string{"rope_theta is 0"}},
		{"local base 0", edit(gemma3_1bConfig, `"rope_local_base_freq": 10000,`, `"rope_local_base_freq": 0,`), []string{"rope_local_base_freq is 0"}},
		{"llama3 scaling on Gemma 3", edit(gemma3_4bConfig, `"rope_type": "linear"`, `"rope_type": "llama3"`), []string{`text_config.rope_scaling type "llama3"`}},
		{"bidirectional", edit(gemma3_270mConfig, `"use_bidirectional_attention": false,`, `"use_bidirectional_attention": true,`), []string{"use_bidirectional_attention is true", "EmbeddingGemma"}},
		{"model_type", edit(gemma3_1bConfig, `"model_type": "gemma3_text",`, `"model_type": "gemma2",`), []string{`model_type is "gemma2"`, `"gemma3_text"`}},
		{"text model_type", edit(gemma3_4bConfig, `"model_type": "gemma3_text",`, `"model_type": "gemma2",`), []string{`text_config.model_type is "gemma2"`}},
		{"no text_config", `{"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3"}`, []string{"no text_config"}},
		{"gpt-oss", `{"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss"}`, []string{"GptOssForCausalLM", "cannot run gpt-oss models", "MXFP4"}},
		{"Gemma 3n", `{"architectures": ["Gemma3nForConditionalGeneration"]}`, []string{"cannot run gemma3n models"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readConfigText(t, tc.text)
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.Contains(t, err.Error(), "config.json")
		})
	}
}
