package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/quant"
)

// workedExample is the design sketch's 7B-class model: 32 layers, 8 KV heads of width 128,
// an f16 cache, 4096-token sequences, 80 GB of memory of which the weights take 14 GB.
func workedExample() Input {
	return Input{
		Shape:   Shape{Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128},
		KType:   quant.F16,
		VType:   quant.F16,
		Context: 4096, BlockSize: 16,
		Memory: 80e9, Weights: 14e9,
		SharedPrefixes: []int{0, 1024, 2048, 3072},
	}
}

// TestWorkedExample pins the numbers of the design sketch: 128 KiB per token, 0.5 GiB per
// 4096-token sequence, and — "about a hundred" in the prose — exactly 122 sequences in the
// 66 GB left after the weights: 66e9 B / 2 MiB per 16-token block = 31471 blocks, and
// 31471 / 256 blocks per sequence = 122.
func TestWorkedExample(t *testing.T) {
	t.Parallel()

	r, err := Compute(workedExample())
	require.NoError(t, err)
	require.Equal(t, int64(131072), r.BytesPerToken, "128 KiB per token")
	require.Equal(t, int64(2*32*8*128*2), r.BytesPerToken, "the formula 2·layers·kv_heads·head_dim·bytes")
	require.Equal(t, int64(1<<29), r.BytesPerSequence, "0.5 GiB per 4096-token sequence")
	require.Equal(t, 256, r.BlocksPerSequence)
	require.Equal(t, int64(2<<20), r.BytesPerBlock)
	require.Equal(t, int64(1<<29), r.BlockBytesPerSequence, "4096 is a multiple of 16: no rounding")
	require.Equal(t, int64(66e9), r.Left)
	require.Equal(t, int64(31471), r.CacheBlocks)
	require.Equal(t, int64(122), r.MaxSequences)
	require.Equal(t, int64(66e9)/(4096*131072), r.MaxSequences, "block rounding changes nothing here")
}

// TestBytesPerTokenMatchesKVCache checks, for every pair of key and value types over several
// shapes, that the planner's bytes per token is exactly what kvcache allocates.
func TestBytesPerTokenMatchesKVCache(t *testing.T) {
	t.Parallel()

	shapes := []struct{ layers, kvHeads, headDim int }{
		{32, 8, 128}, {32, 32, 128}, {80, 8, 128}, {30, 3, 64}, {6, 6, 48}, {5, 4, 8}, {1, 1, 32}, {2, 3, 5},
	}
	for _, s := range shapes {
		for _, k := range quant.CacheTypes() {
			for _, v := range quant.CacheTypes() {
				t.Run(fmt.Sprintf("%dx%dx%d/%v/%v", s.layers, s.kvHeads, s.headDim, k, v), func(t *testing.T) {
					got, err := BytesPerToken(s.layers, s.kvHeads, s.headDim, k, v)
					cfg := kvcache.Config{Layers: s.layers, KVHeads: s.kvHeads, HeadDim: s.headDim, BlockSize: 16, NumBlocks: 1, KType: k, VType: v}
					if cerr := cfg.Validate(); cerr != nil {
						require.Error(t, err, "kvcache rejects the shape, so must the planner")
						return
					}
					require.NoError(t, err)
					require.Equal(t, cfg.BytesPerToken(), got)
				})
			}
		}
	}
}

// TestCacheTypeTable checks each row of the cache-type comparison against kvcache and
// against the per-element sizes the cache types document.
func TestCacheTypeTable(t *testing.T) {
	t.Parallel()

	r, err := Compute(workedExample())
	require.NoError(t, err)
	require.Len(t, r.CacheTypes, len(quant.CacheTypes()))
	perValue := map[quant.CacheType]int64{ // bytes of one K row of 8 heads × 128 values
		quant.F32: 4 * 1024, quant.F16: 2 * 1024, quant.BF16: 2 * 1024, quant.FP8E5M2: 1024,
		quant.Int8: 8 * (4 + 128), quant.FP8E4M3: 8 * (4 + 128), quant.Q8_0: 1024 / 32 * 34,
		// ggml's blocks of 32 values: sizeof(block_q4_0) = 18, block_q4_1 20, block_iq4_nl
		// 18, block_q5_0 22, block_q5_1 24.
		quant.Q4_0: 1024 / 32 * 18, quant.Q4_1: 1024 / 32 * 20, quant.IQ4_NL: 1024 / 32 * 18,
		quant.Q5_0: 1024 / 32 * 22, quant.Q5_1: 1024 / 32 * 24,
	}
	require.Len(t, perValue, len(quant.CacheTypes()))
	for _, v := range r.CacheTypes {
		require.NoError(t, v.Err)
		cfg := kvcache.Config{Layers: 32, KVHeads: 8, HeadDim: 128, KType: v.KType, VType: v.VType}
		require.Equal(t, cfg.BytesPerToken(), v.BytesPerToken, v.KType.String())
		require.Equal(t, 32*2*perValue[v.KType], v.BytesPerToken, v.KType.String())
		require.Equal(t, 256*16*v.BytesPerToken, v.BlockBytesPerSequence)
		require.Equal(t, int64(66e9)/(16*v.BytesPerToken)/256, v.MaxSequences)
	}
	require.Equal(t, r.MaxSequences, r.CacheTypes[quant.F16].MaxSequences)
	require.Equal(t, int64(61), r.CacheTypes[quant.F32].MaxSequences)
	require.Equal(t, int64(231), r.CacheTypes[quant.Q8_0].MaxSequences)
	// q4_0: 2·32·576 B = 36 KiB per token; 66e9 B / (16 tokens · 36 KiB) = 111897 blocks,
	// 437 sequences of 256 blocks.
	require.Equal(t, int64(437), r.CacheTypes[quant.Q4_0].MaxSequences)
}

// TestWithoutGQA checks that dropping GQA multiplies the bytes per token by exactly
// heads/kv_heads, for every cache type, and divides the sequences accordingly.
func TestWithoutGQA(t *testing.T) {
	t.Parallel()

	for _, s := range []Shape{
		{Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128},
		{Layers: 80, Heads: 64, KVHeads: 8, HeadDim: 128},
		{Layers: 28, Heads: 28, KVHeads: 4, HeadDim: 128},
		{Layers: 30, Heads: 9, KVHeads: 3, HeadDim: 64},
		{Layers: 32, Heads: 32, KVHeads: 32, HeadDim: 128},
	} {
		for _, ct := range quant.CacheTypes() {
			in := workedExample()
			in.Shape, in.KType, in.VType = s, ct, ct
			r, err := Compute(in)
			require.NoError(t, err)
			g := r.WithoutGQA
			require.NotNil(t, g)
			require.NoError(t, g.Err)
			require.Equal(t, s.Heads, g.KVHeads)
			require.Equal(t, r.BytesPerToken*int64(s.Heads/s.KVHeads), g.BytesPerToken, "%+v %v", s, ct)
			require.Equal(t, r.BlockBytesPerSequence*int64(s.Heads/s.KVHeads), g.BlockBytesPerSequence)
			require.Equal(t, r.Left/g.BlockBytesPerSequence, g.MaxSequences)
			require.LessOrEqual(t, g.MaxSequences, r.MaxSequences)
		}
	}
	r, err := Compute(workedExample())
	require.NoError(t, err)
	require.Equal(t, int64(30), r.WithoutGQA.MaxSequences, "66e9 / 2 GiB")

	in := workedExample()
	in.Shape.Heads = 0
	r, err = Compute(in)
	require.NoError(t, err)
	require.Nil(t, r.WithoutGQA, "unknown query heads: no comparison")
}

// TestSharedPrefix checks the prefix-sharing table: full prefix blocks are stored once, so a
// longer shared prefix fits more sequences, and the counts follow the block arithmetic.
func TestSharedPrefix(t *testing.T) {
	t.Parallel()

	r, err := Compute(workedExample())
	require.NoError(t, err)
	require.Equal(t, []SharedPrefix{
		{Tokens: 0, SharedBlocks: 0, OwnBlocks: 256, MaxSequences: 122},
		{Tokens: 1024, SharedBlocks: 64, OwnBlocks: 192, MaxSequences: (31471 - 64) / 192},
		{Tokens: 2048, SharedBlocks: 128, OwnBlocks: 128, MaxSequences: (31471 - 128) / 128},
		{Tokens: 3072, SharedBlocks: 192, OwnBlocks: 64, MaxSequences: (31471 - 192) / 64},
	}, r.SharedPrefixes)
	for i := 1; i < len(r.SharedPrefixes); i++ {
		require.Greater(t, r.SharedPrefixes[i].MaxSequences, r.SharedPrefixes[i-1].MaxSequences)
	}

	// A partly filled block is not shared: 1000 tokens share floor(1000/16) = 62 blocks.
	in := workedExample()
	in.SharedPrefixes = []int{1000, 15, 4095}
	r, err = Compute(in)
	require.NoError(t, err)
	require.Equal(t, SharedPrefix{Tokens: 1000, SharedBlocks: 62, OwnBlocks: 194, MaxSequences: (31471 - 62) / 194}, r.SharedPrefixes[0])
	require.Equal(t, SharedPrefix{Tokens: 15, SharedBlocks: 0, OwnBlocks: 256, MaxSequences: 122}, r.SharedPrefixes[1], "less than a block shares nothing")
	require.Equal(t, SharedPrefix{Tokens: 4095, SharedBlocks: 255, OwnBlocks: 1, MaxSequences: 31471 - 255}, r.SharedPrefixes[2])

	// A prefix larger than the whole cache fits no sequence at all (and no negative count).
	in = workedExample()
	in.Memory, in.Weights = 14e9+100<<20, 14e9
	in.SharedPrefixes = []int{0, 4000}
	r, err = Compute(in)
	require.NoError(t, err)
	require.Equal(t, int64(50), r.CacheBlocks)
	require.Equal(t, int64(0), r.MaxSequences)
	require.Equal(t, int64(0), r.SharedPrefixes[1].MaxSequences)
}

// TestBlockRounding checks that a context that is not a multiple of the block size costs
// whole blocks.
func TestBlockRounding(t *testing.T) {
	t.Parallel()

	in := workedExample()
	in.Context, in.SharedPrefixes = 4000, nil
	r, err := Compute(in)
	require.NoError(t, err)
	require.Equal(t, 250, r.BlocksPerSequence)
	require.Equal(t, r.BytesPerSequence, r.BlockBytesPerSequence, "4000 = 250·16")

	in.Context = 4097
	r, err = Compute(in)
	require.NoError(t, err)
	require.Equal(t, 257, r.BlocksPerSequence)
	require.Equal(t, int64(4097)*131072, r.BytesPerSequence)
	require.Equal(t, int64(257*16)*131072, r.BlockBytesPerSequence)
	require.Equal(t, int64(31471/257), r.MaxSequences)

	in.Context, in.BlockSize = 100, 1
	r, err = Compute(in)
	require.NoError(t, err)
	require.Equal(t, r.BytesPerSequence, r.BlockBytesPerSequence, "block size 1 never rounds")
}

// TestComputeErrors checks that bad input is refused with a message naming what was wrong,
// and that weights larger than the memory say so instead of giving negative counts.
func TestComputeErrors(t *testing.T) {
	t.Parallel()

	in := workedExample()
	in.Memory, in.Weights = 8e9, 14e9
	r, err := Compute(in)
	var noRoom *NoRoomError
	require.ErrorAs(t, err, &noRoom)
	require.True(t, IsNoRoom(err))
	require.Equal(t, &NoRoomError{Memory: 8e9, Weights: 14e9}, noRoom)
	require.Contains(t, err.Error(), "nothing is left for the KV cache")
	require.Equal(t, int64(0), r.Left)
	require.Equal(t, int64(0), r.MaxSequences)
	require.Equal(t, int64(131072), r.BytesPerToken, "the per-token figures are still reported")
	for _, v := range r.CacheTypes {
		require.Equal(t, int64(0), v.MaxSequences)
	}

	for _, tc := range []struct {
		name string
		edit func(*Input)
		want string
	}{
		{"no layers", func(in *Input) { in.Shape.Layers = 0 }, "layers, kv_heads and head_dim must all be ≥ 1"},
		{"heads not grouped", func(in *Input) { in.Shape.Heads = 30 }, "cannot be grouped over 8 KV heads"},
		{"huge row", func(in *Input) { in.Shape.HeadDim = 1 << 20 }, "beyond the planner's limit"},
		{"zero context", func(in *Input) { in.Context = 0 }, "context must be in"},
		{"zero block size", func(in *Input) { in.BlockSize = 0 }, "block size must be in"},
		{"negative memory", func(in *Input) { in.Memory = -1 }, "must not be negative"},
		{"prefix = context", func(in *Input) { in.SharedPrefixes = []int{4096} }, "needs at least one token of its own"},
		{"negative prefix", func(in *Input) { in.SharedPrefixes = []int{-1} }, "shared prefix of -1 tokens"},
		{"q8_0 misfit", func(in *Input) { in.Shape.HeadDim, in.KType = 10, quant.Q8_0 }, "multiple of 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := workedExample()
			tc.edit(&in)
			_, err := Compute(in)
			require.ErrorContains(t, err, tc.want)
			require.False(t, IsNoRoom(err))
		})
	}

	// A q8_0 misfit in the comparison table is reported in its row, not as an error.
	in = workedExample()
	in.Shape = Shape{Layers: 6, Heads: 6, KVHeads: 6, HeadDim: 12}
	r, err = Compute(in)
	require.NoError(t, err)
	require.ErrorContains(t, r.CacheTypes[quant.Q8_0].Err, "multiple of 32")
	require.NoError(t, r.CacheTypes[quant.Int8].Err)
}

// TestSlidingWindowCapsTheSequence: Mistral-7B's 4096-token window caps a 32768-token
// sequence at the blocks of 4096 positions plus the one the window straddles, so eight
// times more sequences fit than with full attention, and prefix sharing no longer helps at
// full length.
func TestSlidingWindowCapsTheSequence(t *testing.T) {
	t.Parallel()

	p, err := LookupPreset("mistral-7b")
	require.NoError(t, err)
	require.Equal(t, 4096, p.Shape.Window)
	in := Input{Shape: p.Shape, KType: quant.F16, VType: quant.F16, Context: 32768, BlockSize: 16, Memory: 80e9, Weights: 14e9, SharedPrefixes: []int{0, 2048}}
	r, err := Compute(in)
	require.NoError(t, err)
	require.Equal(t, 4096/16+1, r.BlocksPerSequence)
	require.Equal(t, int64(4096)*r.BytesPerToken, r.BytesPerSequence)
	full := in
	full.Shape.Window = 0
	f, err := Compute(full)
	require.NoError(t, err)
	require.Equal(t, 32768/16, f.BlocksPerSequence)
	require.Equal(t, f.CacheBlocks/257, r.MaxSequences)
	require.Greater(t, r.MaxSequences, 7*f.MaxSequences)
	require.Zero(t, r.SharedPrefixes[1].SharedBlocks)
	require.Equal(t, r.MaxSequences, r.SharedPrefixes[1].MaxSequences)
	// A window longer than the context changes nothing.
	long := full
	long.Shape.Window = 40000
	l, err := Compute(long)
	require.NoError(t, err)
	require.Equal(t, f.MaxSequences, l.MaxSequences)
}

// TestElementBytes: an unscaled type's element size times the values of a row is its row,
// as the cache stores it; the scaled types say they have no one element size.
func TestElementBytes(t *testing.T) {
	t.Parallel()

	for _, ct := range quant.CacheTypes() {
		n, ok := ElementBytes(ct)
		switch ct {
		case quant.F32, quant.F16, quant.BF16, quant.FP8E5M2:
		default: // int8, fp8-e4m3 and the block types carry scales
			require.False(t, ok, ct.String())
			continue
		}
		require.True(t, ok, ct.String())
		require.Equal(t, ct.RowBytes(4, 32), n*4*32, ct.String())
	}
}
