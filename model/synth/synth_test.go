package synth

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShapesValidateAndLoad(t *testing.T) {
	t.Parallel()

	for _, name := range []string{"default", "tiny"} {
		s, err := ShapeByName(name)
		require.NoError(t, err)
		m, err := s.Model()
		require.NoError(t, err)
		c := m.Config
		require.Equal(t, s.Dim, c.Dim)
		require.Equal(t, s.KVHeads, c.KVHeads)
		require.Equal(t, 259, c.Vocab)
		require.Equal(t, []int{1, 'h' + 3, 'i' + 3}, m.Tokenizer.Encode("hi", true), "byte-level vocabulary: <0xNN> is id 3+NN")
	}
	_, err := ShapeByName("gpt-5")
	require.ErrorContains(t, err, "stories110m")
}

func TestSameShapeSameBytes(t *testing.T) {
	t.Parallel()

	a, err := Tiny.Bytes()
	require.NoError(t, err)
	b, err := Tiny.Bytes()
	require.NoError(t, err)
	require.True(t, bytes.Equal(a, b))
	other := Tiny
	other.Seed++
	c, err := other.Bytes()
	require.NoError(t, err)
	require.False(t, bytes.Equal(a, c), "the seed changes the weights")
}

func TestValidateRejectsBadShapes(t *testing.T) {
	t.Parallel()

	for name, s := range map[string]Shape{
		"dim not a multiple of heads": {Dim: 30, Layers: 1, Heads: 4, KVHeads: 1, Hidden: 8, Context: 8, RopeBase: 1e4},
		"odd head dim":                {Dim: 12, Layers: 1, Heads: 4, KVHeads: 1, Hidden: 8, Context: 8, RopeBase: 1e4},
		"kv heads do not divide":      {Dim: 32, Layers: 1, Heads: 4, KVHeads: 3, Hidden: 8, Context: 8, RopeBase: 1e4},
		"vocab below bytes":           {Dim: 32, Layers: 1, Heads: 4, KVHeads: 1, Hidden: 8, Context: 8, RopeBase: 1e4, Vocab: 100},
		"no layers":                   {Dim: 32, Layers: 0, Heads: 4, KVHeads: 1, Hidden: 8, Context: 8, RopeBase: 1e4},
	} {
		require.Error(t, s.Validate(), name)
		_, err := s.Bytes()
		require.Error(t, err, name)
	}
	var hd *HeadDimError
	require.ErrorAs(t, Shape{Dim: 30, Layers: 1, Heads: 4, KVHeads: 1, Hidden: 8, Context: 8, RopeBase: 1e4}.Validate(), &hd)
	require.Equal(t, HeadDimError{Dim: 30, Heads: 4}, *hd)
	withHeadDim := Shape{Dim: 30, Layers: 1, Heads: 4, KVHeads: 1, Hidden: 8, Context: 8, RopeBase: 1e4, HeadDim: 8}
	require.NoError(t, withHeadDim.Validate(), "a head dim of its own makes the shape valid")
}

func TestPaddedVocab(t *testing.T) {
	t.Parallel()

	s := Tiny
	s.Vocab = 300
	m, err := s.Model()
	require.NoError(t, err)
	require.Equal(t, 300, m.Config.Vocab)
	require.Equal(t, 300, m.Tokenizer.VocabSize())
}

func TestVariantsLoadWithTheirFeatures(t *testing.T) {
	t.Parallel()

	for name, s := range Variants {
		t.Run(name, func(t *testing.T) {
			m, err := s.Model()
			require.NoError(t, err)
			c := m.Config
			require.Equal(t, s.arch(), c.Arch)
			require.Equal(t, s.headDim(), c.HeadDim)
			require.Equal(t, s.QKVBias, c.QKVBias)
			require.Equal(t, s.QKNorm || s.Arch == "gemma3", c.QKNorm, "gemma3 brings its q/k norms")
			if s.RopeScaling.Type == "linear" {
				require.Equal(t, s.RopeScaling.Type, c.RopeScaling.Type)
			}
			if s.RopeScaling.Type == "llama3" {
				require.Len(t, m.Weights.RopeFreqs, s.headDim()/2)
			}
			if s.Arch != "" && s.Arch != "llama" {
				require.NotZero(t, c.RopeStyle, "qwen and gemma rotate halves")
			}
		})
	}
}

// TestVariantByName finds each variant and names the known ones for an unknown name.
func TestVariantByName(t *testing.T) {
	for _, n := range VariantNames() {
		v, err := VariantByName(n)
		require.NoError(t, err, n)
		require.Equal(t, Variants[n], v)
	}
	_, err := VariantByName("nope")
	require.ErrorContains(t, err, `unknown --variant "nope" (known: `+VariantNames()[0])
}

// TestForFormat: only a llama shape without a vocabulary size, written as llama2c, gets
// the 260-token vocabulary with the space piece.
func TestForFormat(t *testing.T) {
	require.Equal(t, 260, Tiny.ForFormat("llama2c").Vocab)
	require.Equal(t, 0, Tiny.ForFormat("gguf").Vocab)
	q := Tiny
	q.Arch = "qwen2"
	require.Equal(t, 0, q.ForFormat("llama2c").Vocab)
	big := Tiny
	big.Vocab = 300
	require.Equal(t, 300, big.ForFormat("llama2c").Vocab)
	l := Tiny
	l.Arch = "llama"
	require.Equal(t, 260, l.ForFormat("llama2c").Vocab)
}
