package plan

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
)

// TestEveryCacheType: one row per cache type; f32 and f16 rows are the formula
// 2 · layers · kv_heads · head_dim · bytes, the block types refuse a row that is not a
// multiple of 32 values, and weights larger than the memory leave 0 sequences, not an error.
func TestEveryCacheType(t *testing.T) {
	t.Parallel()

	shape := Shape{Layers: 4, Heads: 4, KVHeads: 2, HeadDim: 12}
	in := Input{Shape: shape, Context: 100, BlockSize: 16, Memory: 1 << 20, Weights: 0}
	rows := EveryCacheType(in)
	require.Len(t, rows, len(quant.CacheTypes()))
	byName := map[string]TypeRow{}
	for _, r := range rows {
		byName[r.CacheType] = r
	}
	require.Equal(t, int64(2*4*2*12*4), byName["f32"].BytesPerToken)
	require.Equal(t, int64(2*4*2*12*2), byName["f16"].BytesPerToken)
	require.Equal(t, int64(100*2*4*2*12*2), byName["f16"].BytesPerSequence)
	// 1 MiB holds floor(2^20 / (16 · 768 B)) = 85 blocks of f32; a sequence holds ceil(100/16) = 7.
	require.Equal(t, int64(85/7), byName["f32"].MaxSequences)
	require.NotEmpty(t, byName["q4_0"].Error, "24 values per row are no whole q4_0 block")

	in.Weights = 2 << 20
	for _, r := range EveryCacheType(in) {
		if r.Error == "" {
			require.Zero(t, r.MaxSequences, r.CacheType)
			require.Positive(t, r.BytesPerToken, r.CacheType)
		}
	}
}
