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
	t.Parallel()

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
		// Gemma: the counts model/hf's hub-size tests load from the checkpoints (270M, 1B,
		// 2 2B) and Google's model cards (Gemma 2 9B and 27B).
		"gemma-3-270m": 268_098_176,
		"gemma-3-1b":   999_885_952,
		"gemma-2-2b":   2_614_341_888,
		"gemma-2-9b":   9_241_705_984,
		"gemma-2-27b":  27_227_128_320,
	}
	// The text models of Gemma 3's multimodal checkpoints have no published count of their
	// own, and gpt-oss is arithmetic only (a mixture of experts: no count at all).
	unchecked := map[string]bool{"gemma-3-4b": true, "gemma-3-12b": true, "gemma-3-27b": true, "gpt-oss-20b": true, "gpt-oss-120b": true}
	rounded := map[string]float64{ // llama2.c's README gives millions
		"stories15m":  15e6,
		"stories110m": 110e6,
	}
	require.Len(t, Presets(), len(exact)+len(rounded)+len(unchecked), "every preset is checked or said not to be")
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			require.NoError(t, p.Shape.Validate())
			require.NotEmpty(t, p.Repo)
			require.Contains(t, p.Source, "vocab", "the source names the fields")
			n, ok := p.Shape.Params()
			if unchecked[p.Name] {
				return
			}
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
	t.Parallel()

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
	t.Parallel()

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
	t.Parallel()

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

// TestGemma31BGroupsByHand: gemma-3-1b at 32768 tokens, f16, blocks of 16, against the
// arithmetic done by hand. One layer's K and V rows of one token: 2 · 1 KV head · 256 · 2 B
// = 1024 B. 4 global layers hold every token: 4 · 1024 · 32768 = 128 MiB; 22 sliding layers
// hold their 512-token window: 22 · 1024 · 512 = 11 MiB (704 MiB without it). gcd(4, 22) = 2
// layers per group: 2 full groups of 2048 blocks, 11 sliding groups of 32 blocks
// (2048 − (32768 − 512)/16), blocks of 16 · 2 · 1024 = 32 KiB.
func TestGemma31BGroupsByHand(t *testing.T) {
	t.Parallel()

	p, err := LookupPreset("gemma-3-1b")
	require.NoError(t, err)
	r, err := Compute(Input{Shape: p.Shape, KType: quant.F16, VType: quant.F16, Context: 32768, BlockSize: 16, Memory: 16 << 30, Weights: 2 << 30})
	require.NoError(t, err)
	require.Equal(t, []GroupPlan{
		{Window: 0, Layers: 4, Groups: 2, LayersPerGroup: 2, BytesPerToken: 4096, Tokens: 32768, Bytes: 128 << 20, BytesNoWindow: 128 << 20, Blocks: 2 * 2048},
		{Window: 512, Layers: 22, Groups: 11, LayersPerGroup: 2, BytesPerToken: 22528, Tokens: 512, Bytes: 11 << 20, BytesNoWindow: 704 << 20, Blocks: 11 * 32},
	}, r.Groups)
	require.Equal(t, int64(139<<20), r.BytesPerSequence)
	require.Equal(t, int64(32<<10), r.BytesPerBlock)
	require.Equal(t, 4448, r.BlocksPerSequence)
	require.Equal(t, r.BytesPerSequence, r.BlockBytesPerSequence, "512 and 32768 are whole blocks")
	require.Equal(t, int64(14<<30)/(32<<10)/4448, r.MaxSequences)
	// Gemma 2 2B alternates: 13 and 13, one group each; at its 8192-token context the
	// 4096-token window halves the sliding layers' share.
	p, err = LookupPreset("gemma-2-2b")
	require.NoError(t, err)
	r, err = Compute(Input{Shape: p.Shape, KType: quant.F16, VType: quant.F16, Context: 8192, BlockSize: 16, Memory: 16 << 30})
	require.NoError(t, err)
	require.Equal(t, 2, len(r.Groups))
	require.Equal(t, 13, r.Groups[0].LayersPerGroup)
	require.Equal(t, int64(13*2*4*256*2)*8192, r.Groups[0].Bytes)
	require.Equal(t, int64(13*2*4*256*2)*4096, r.Groups[1].Bytes)
	// gpt-oss alternates 128-token windows: at 131072 tokens the sliding half holds 128.
	p, err = LookupPreset("gpt-oss-20b")
	require.NoError(t, err)
	r, err = Compute(Input{Shape: p.Shape, KType: quant.BF16, VType: quant.BF16, Context: 131072, BlockSize: 16, Memory: 80 << 30})
	require.NoError(t, err)
	require.Equal(t, int64(12*2*8*64*2)*(131072+128), r.BytesPerSequence)
	_, ok := p.Shape.Params()
	require.False(t, ok, "gpt-oss is arithmetic only")
}
