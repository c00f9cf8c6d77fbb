package inspect

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/model/builtin"
)

// TestReport builds the built-in model's report (stories260K: 5 layers, 8 heads, 4 KV
// heads) and checks its numbers, its cache rows against plan's arithmetic, and the text.
func TestReport(t *testing.T) {
	m, err := builtin.Model()
	require.NoError(t, err)
	defer m.Close()
	r := New(m, 1<<30, "--mem 1GiB", 16)
	require.Equal(t, 5, r.Config.Layers)
	require.Equal(t, m.Weights.Bytes(), r.WeightBytes)
	require.Equal(t, m.Tokenizer.VocabSize(), r.Tokenizer.VocabSize)
	require.Len(t, r.Tensors, len(m.Tensors))
	require.NotEmpty(t, r.Cache)
	for _, row := range r.Cache {
		if row.CacheType == "f16" {
			// 2 · 5 layers · 4 KV heads · 8 head_dim · 2 bytes
			require.Equal(t, int64(2*5*4*8*2), row.BytesPerToken)
		}
	}
	var b strings.Builder
	r.WriteText(&b)
	text := b.String()
	require.True(t, strings.HasPrefix(text, m.Source+" (gguf)\n\n"), text)
	require.Contains(t, text, "heads            8 query, 4 key/value (GQA group 2), head_dim 8\n")
	require.Contains(t, text, "beside the weights in "+plan.FormatSize(1<<30)+" (--mem 1GiB):\n")
	require.Contains(t, text, "\n  f16 ")
}
