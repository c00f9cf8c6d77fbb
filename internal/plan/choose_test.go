package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDefaultSharedPrefixes: none, then ¼, ½ and ¾ of the context, without repeats for a
// context too short to split.
func TestDefaultSharedPrefixes(t *testing.T) {
	t.Parallel()

	for ctx, want := range map[int][]int{4096: {0, 1024, 2048, 3072}, 2: {0, 1}, 1: {0}} {
		got := DefaultSharedPrefixes(ctx)
		require.Falsef(t, len(got) != len(want), "DefaultSharedPrefixes(%d) = %v, want %v", ctx, got, want)
		for i := range got {
			require.Falsef(t, got[i] != want[i], "DefaultSharedPrefixes(%d) = %v, want %v", ctx, got, want)
		}
	}
}

// TestChooseWeights: a given size wins, then a weight type × the parameter count, then the
// model's bytes, then the f16 estimate; a size and a type together, or a type without a
// parameter count, are refused.
func TestChooseWeights(t *testing.T) {
	t.Parallel()

	full := Shape{Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 8, Dim: 32, Hidden: 64, Vocab: 100}
	params, known := full.Params()
	require.True(t, known, "the full shape has no parameter count")
	bare := Shape{Layers: 2, KVHeads: 2, HeadDim: 8}
	q8, err := ParseWeightType("q8_0")
	require.NoError(t, err)
	for _, c := range []struct {
		s      Shape
		choice WeightsChoice
		bytes  int64
		from   string
	}{
		{full, WeightsChoice{Given: true, Bytes: 7, GivenFrom: "given", Model: 99}, 7, "given"},
		{full, WeightsChoice{Dtype: "q8_0", Model: 99}, q8.Bytes(params), "q8_0 estimate"},
		{full, WeightsChoice{Model: 99, ModelFrom: "file"}, 99, "file"},
		{full, WeightsChoice{Model: -1}, 2 * params, "f16 estimate"},
		{bare, WeightsChoice{Model: -1}, 0, ""},
	} {
		w, err := ChooseWeights(c.s, c.choice)
		require.Falsef(t, err != nil || w.Bytes != c.bytes || len(w.From) < len(c.from) || w.From[:len(c.from)] != c.from, "ChooseWeights(%+v) = %+v, %v; want %d bytes from %q", c.choice, w, err, c.bytes, c.from)
	}
	_, err = ChooseWeights(full, WeightsChoice{Given: true, Dtype: "f16"})
	require.ErrorIs(t, err, ErrWeightsTwice, "size and type")
	_, err = ChooseWeights(bare, WeightsChoice{Dtype: "f16", Model: -1})
	require.ErrorIs(t, err, ErrWeightsNeedParams, "type without parameters")
}
