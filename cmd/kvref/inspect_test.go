package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

func TestInspectStories260K(t *testing.T) {
	path := testutil.Shared(t, "models/stories260K.gguf")
	out, stderr, code := kvref(t, "inspect", "--json", "--mem", "1GiB", path)
	require.Equal(t, 0, code, stderr)
	var rep inspectReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "gguf", rep.Format)
	require.Equal(t, 5, rep.Config.Layers)
	require.Equal(t, 4, rep.Config.KVHeads)
	require.Equal(t, 8, rep.Config.HeadDim)
	require.Len(t, rep.Tensors, 3+9*5)
	require.EqualValues(t, 512*64*2+64+5*(64*64*2+32*64*2+172*64*3+64*2), rep.Params)
	require.EqualValues(t, 4*rep.Params, rep.WeightBytes)
	for _, c := range rep.Cache {
		if c.CacheType == "f32" {
			require.EqualValues(t, 2*5*4*8*4, c.BytesPerToken)
			require.EqualValues(t, 2048*c.BytesPerToken, c.BytesPerSequence)
			blocks := (int64(1<<30) - rep.WeightBytes) / (16 * c.BytesPerToken)
			require.Equal(t, blocks/(2048/16), c.MaxSequences)
		}
	}
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
