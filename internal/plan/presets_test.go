package plan

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
)

// TestPresetParameterCounts checks every preset's shape against the parameter count its
// publisher states: exact where the checkpoint's count is published to the parameter, and
// to the publisher's rounding ("15M") otherwise. A wrong layer count, width or tie shows up
// here.
func TestPresetParameterCounts(t *testing.T) {
	exact := map[string]int64{
		"llama-2-7b":     6_738_415_616,
		"llama-3-8b":     8_030_261_248,
		"llama-3.1-70b":  70_553_706_496,
		"mistral-7b":     7_241_732_096,
		"qwen2.5-7b":     7_615_616_512, // "7.61B", of which "6.53B" non-embedding
		"tinyllama-1.1b": 1_100_048_384,
		"smollm2-135m":   134_515_008,
		"smollm2-360m":   361_821_120,
		"smollm2-1.7b":   1_711_376_384,
	}
	rounded := map[string]float64{ // llama2.c's README gives millions
		"stories15m":  15e6,
		"stories110m": 110e6,
	}
	require.Len(t, Presets(), len(exact)+len(rounded), "every preset is checked")
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			require.NoError(t, p.Shape.Validate())
			require.NotEmpty(t, p.Repo)
			require.Contains(t, p.Source, "vocab", "the source names the fields")
			n, ok := p.Shape.Params()
			require.True(t, ok)
			if want, ok := exact[p.Name]; ok {
				require.Equal(t, want, n)
				return
			}
			require.Equal(t, rounded[p.Name], math.Round(float64(n)/1e6)*1e6, "%d parameters", n)
		})
	}
	qwen, err := LookupPreset("qwen2.5-7b")
	require.NoError(t, err)
	n, _ := qwen.Shape.Params()
	require.Equal(t, 6.53, math.Round(float64(n-2*152064*3584)/1e7)/100, "Qwen's non-embedding count")
}

// TestPresetKVCache pins the cache figures of the presets the design and README quote.
func TestPresetKVCache(t *testing.T) {
	for _, tc := range []struct {
		name          string
		bytesPerToken int64
		context       int
	}{
		{"llama-2-7b", 512 << 10, 4096},      // 2 · 32 · 32 · 128 · 2
		{"llama-3-8b", 128 << 10, 8192},      // 2 · 32 · 8 · 128 · 2
		{"llama-3.1-70b", 320 << 10, 131072}, // 2 · 80 · 8 · 128 · 2
		{"mistral-7b", 128 << 10, 32768},
		{"qwen2.5-7b", 56 << 10, 131072}, // 2 · 28 · 4 · 128 · 2
		{"tinyllama-1.1b", 22 << 10, 2048},
		{"smollm2-135m", 2 * 30 * 3 * 64 * 2, 8192},
		{"smollm2-360m", 2 * 32 * 5 * 64 * 2, 8192},
		{"smollm2-1.7b", 2 * 24 * 32 * 64 * 2, 8192},
		{"stories15m", 2 * 6 * 6 * 48 * 2, 256},
		{"stories110m", 2 * 12 * 12 * 64 * 2, 1024},
	} {
		p, err := LookupPreset(tc.name)
		require.NoError(t, err)
		bpt, err := BytesPerToken(p.Shape.Layers, p.Shape.KVHeads, p.Shape.HeadDim, quant.F16, quant.F16)
		require.NoError(t, err)
		require.Equal(t, tc.bytesPerToken, bpt, tc.name)
		require.Equal(t, tc.context, p.Shape.Context, tc.name)
	}
	p, err := LookupPreset("llama-2-7b")
	require.NoError(t, err)
	r, err := Compute(Input{Shape: p.Shape, KType: quant.F16, VType: quant.F16, Context: p.Shape.Context, BlockSize: 16, Memory: 80e9, Weights: 14e9})
	require.NoError(t, err)
	require.Equal(t, int64(2<<30), r.BlockBytesPerSequence, "2 GiB per 4096-token sequence")
	require.Equal(t, int64(30), r.MaxSequences, "66e9 / 2 GiB")
}

// TestLookupPreset checks names are matched without regard to case and that an unknown
// name is answered with the valid ones.
func TestLookupPreset(t *testing.T) {
	p, err := LookupPreset(" Llama-3-8B ")
	require.NoError(t, err)
	require.Equal(t, "llama-3-8b", p.Name)

	_, err = LookupPreset("llama-9-1t")
	require.ErrorContains(t, err, `unknown preset "llama-9-1t"`)
	for _, name := range PresetNames() {
		require.ErrorContains(t, err, name)
	}
	require.Equal(t, len(Presets()), len(PresetNames()))
}

// TestShapeParams checks the parameter formula on a hand-counted toy shape.
func TestShapeParams(t *testing.T) {
	s := Shape{Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 8, Dim: 32, Hidden: 64, Vocab: 100}
	// embedding 3200, per layer: q 1024 + o 1024 + k 512 + v 512 + ffn 6144 + norms 64 = 9280
	n, ok := s.Params()
	require.True(t, ok)
	require.Equal(t, int64(3200+2*9280+32+3200), n)

	s.Tied = true
	n, _ = s.Params()
	require.Equal(t, int64(3200+2*9280+32), n)

	s.QKVBias = true
	n, _ = s.Params()
	require.Equal(t, int64(3200+2*(9280+32+2*16)+32), n)

	s.Vocab = 0
	_, ok = s.Params()
	require.False(t, ok, "an unknown vocabulary gives no count")
	require.Equal(t, 2, s.GQAGroup())
	s.Heads = 0
	require.Equal(t, 0, s.GQAGroup())
}
