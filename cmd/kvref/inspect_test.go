package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/inspect"
	"github.com/kvref/kvref/internal/testutil"
)

func TestInspectStories260K(t *testing.T) {
	path := testutil.Shared(t, "models/stories260K.gguf")
	out, stderr, code := kvref(t, "inspect", "--json", "--mem", "1GiB", path)
	require.Equal(t, 0, code, stderr)
	var rep inspect.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "gguf", rep.Format)
	require.Equal(t, 5, rep.Config.Layers)
	require.Equal(t, 4, rep.Config.KVHeads)
	require.Equal(t, 8, rep.Config.HeadDim)
	require.Len(t, rep.Tensors, 3+9*5)
	require.EqualValues(t, 512*64*2+64+5*(64*64*2+32*64*2+172*64*3+64*2), rep.Params)
	require.EqualValues(t, 4*rep.Params, rep.WeightBytes)
	// Bytes per token: 2 · 5 layers · (the row of 4 heads × 8 values): 4·32 B for f32; one block
	// of 32 values for the block types, 34 B for q8_0, 18 for q4_0 and iq4_nl, 20 for q4_1, 22
	// for q5_0 and 24 for q5_1 (ggml's block sizes).
	row := map[string]int64{"f32": 4 * 32, "q8_0": 34, "q4_0": 18, "q4_1": 20, "iq4_nl": 18, "q5_0": 22, "q5_1": 24}
	seen := 0
	for _, c := range rep.Cache {
		want, ok := row[c.CacheType]
		if !ok {
			continue
		}
		seen++
		require.EqualValues(t, 2*5*want, c.BytesPerToken, c.CacheType)
		require.EqualValues(t, 2048*c.BytesPerToken, c.BytesPerSequence, c.CacheType)
		blocks := (int64(1<<30) - rep.WeightBytes) / (16 * c.BytesPerToken)
		require.Equal(t, blocks/(2048/16), c.MaxSequences, c.CacheType)
	}
	require.Equal(t, len(row), seen)
	text, _, code := kvref(t, "inspect", "--mem", "1GiB", path)
	require.Equal(t, 0, code)
	require.Contains(t, text, "8 query, 4 key/value (GQA group 2), head_dim 8")
	require.Contains(t, text, "blk.4.ffn_down.weight")
}

func TestInspectErrors(t *testing.T) {
	_, _, code := kvref(t, "inspect")
	require.Equal(t, 2, code)
	_, stderr, code := kvref(t, "inspect", "--mem", "1GiB", filepath.Join(t.TempDir(), "missing.gguf"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "missing.gguf")
}
