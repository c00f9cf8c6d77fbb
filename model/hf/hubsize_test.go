package hf

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/safetensors"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
)

// hubShape is what the tensors of a hub Gemma checkpoint are shaped by.
type hubShape struct {
	prefix                                              string // of the text model's tensors
	dim, layers, heads, kvHeads, headDim, hidden, vocab int
	gemma3                                              bool
	extra                                               []string // other tensors of the checkpoint (the vision tower)
}

// writeHubDir writes a Hugging Face directory shaped exactly like a hub checkpoint: the
// hub's config.json, and a model.safetensors with every tensor of the checkpoint under its
// name, in bfloat16 as the hub stores them, as holes (zeros) so that it takes no disk. The
// tokenizer is a small Gemma-convention one (tokenizer.json of the Gemma synthetic model).
func writeHubDir(t *testing.T, config string, s hubShape) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o644))
	small, err := synth.Variants["gemma3"].Model()
	require.NoError(t, err)
	tokDir := filepath.Join(t.TempDir(), "tok")
	require.NoError(t, Write(tokDir, small, WriteOptions{}))
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
		data, err := os.ReadFile(filepath.Join(tokDir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
	}
	type spec struct {
		name  string
		shape []int
	}
	q, kv := s.heads*s.headDim, s.kvHeads*s.headDim
	specs := []spec{{s.prefix + "embed_tokens.weight", []int{s.vocab, s.dim}}, {s.prefix + "norm.weight", []int{s.dim}}}
	for l := range s.layers {
		p := fmt.Sprintf("%slayers.%d.", s.prefix, l)
		specs = append(specs,
			spec{p + "input_layernorm.weight", []int{s.dim}}, spec{p + "post_attention_layernorm.weight", []int{s.dim}},
			spec{p + "pre_feedforward_layernorm.weight", []int{s.dim}}, spec{p + "post_feedforward_layernorm.weight", []int{s.dim}},
			spec{p + "self_attn.q_proj.weight", []int{q, s.dim}}, spec{p + "self_attn.k_proj.weight", []int{kv, s.dim}},
			spec{p + "self_attn.v_proj.weight", []int{kv, s.dim}}, spec{p + "self_attn.o_proj.weight", []int{s.dim, q}},
			spec{p + "mlp.gate_proj.weight", []int{s.hidden, s.dim}}, spec{p + "mlp.up_proj.weight", []int{s.hidden, s.dim}},
			spec{p + "mlp.down_proj.weight", []int{s.dim, s.hidden}})
		if s.gemma3 {
			specs = append(specs, spec{p + "self_attn.q_norm.weight", []int{s.headDim}}, spec{p + "self_attn.k_norm.weight", []int{s.headDim}})
		}
	}
	for _, name := range s.extra {
		specs = append(specs, spec{name, []int{1152, 1152}})
	}
	out := testutil.NewSparseFile(t, filepath.Join(dir, "model.safetensors"), 2*s.vocab*s.dim)
	var tensors []safetensors.Tensor
	for _, sp := range specs {
		n := 2
		for _, d := range sp.shape {
			n *= d
		}
		tensors = append(tensors, safetensors.Tensor{Name: sp.name, DType: safetensors.BF16, Shape: sp.shape, Data: out.Zeros(n)})
	}
	require.NoError(t, safetensors.Write(out, tensors, map[string]string{"format": "pt"}))
	require.NoError(t, out.Close())
	return dir
}

// loadHubDir loads a directory as Load does, without hashing its gigabytes of holes.
func loadHubDir(t *testing.T, dir string) *model.Model {
	cfg, hc, err := readConfig(dir)
	require.NoError(t, err)
	set, err := safetensors.OpenDir(dir)
	require.NoError(t, err)
	m, err := fromSet(dir, cfg, hc, set)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

// TestHubGemmaDirectoriesLoad: Gemma 3 270M, Gemma 3 1B, Gemma 2 2B and the text model of
// Gemma 3 4B load as they come from the hub: their config.json, every tensor under its
// name and shape (bfloat16), the 4B's vision tower beside its language_model tensors. The
// norms, which a zero checkpoint holds as 0, multiply by 1 + 0.
func TestHubGemmaDirectoriesLoad(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name, config string
		shape        hubShape
		params       uint64
	}{
		{"gemma-3-270m", gemma3_270mConfig, hubShape{"model.", 640, 18, 4, 1, 256, 2048, 262144, true, nil}, 268_098_176},
		{"gemma-3-1b-it", gemma3_1bConfig, hubShape{"model.", 1152, 26, 4, 1, 256, 6912, 262144, true, nil}, 999_885_952},
		{"gemma-2-2b-it", gemma2_2bConfig, hubShape{"model.", 2304, 26, 8, 4, 256, 9216, 256000, false, nil}, 2_614_341_888},
		{"gemma-3-4b-it", gemma3_4bConfig, hubShape{"language_model.model.", 2560, 34, 8, 4, 256, 10240, 262208, true,
			[]string{"vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight", "multi_modal_projector.mm_input_projection_weight"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadHubDir(t, writeHubDir(t, tc.config, tc.shape))
			c := m.Config
			require.Equal(t, tc.shape.layers, c.Layers)
			require.Equal(t, tc.shape.vocab, c.Vocab)
			require.True(t, c.Tied, "no lm_head: the embedding classifies")
			require.Equal(t, float32(1), m.Weights.Layers[c.Layers-1].PostFFNNorm[c.Dim-1], "1 + w with w = 0")
			if tc.params > 0 {
				require.Equal(t, tc.params, m.Params(), "the published parameter count")
			}
		})
	}
}
