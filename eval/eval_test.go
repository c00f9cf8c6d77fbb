package eval

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// TestCacheTypesAgainstF32: the f32 row is the baseline (no divergence, full agreement),
// perplexity deltas are differences of the rows' own perplexities, bytes follow the formula,
// and a coarser cache type diverges more than a finer one.
func TestCacheTypesAgainstF32(t *testing.T) {
	t.Parallel()

	m, err := synth.Tiny.Model()
	require.NoError(t, err)
	defer m.Close()
	var calls, last int
	rep, err := CacheTypes(m, SampleText[:600], []quant.CacheType{quant.F32, quant.F16, quant.FP8E5M2}, 64, 1,
		func(done, total int) { calls, last = done, total })
	require.NoError(t, err)
	require.Equal(t, last, calls, "progress reaches the total")
	require.Equal(t, 3*rep.Windows, last)
	require.Greater(t, rep.Windows, 1)
	require.Len(t, rep.Results, 3)
	f32, f16, e5m2 := rep.Results[0], rep.Results[1], rep.Results[2]
	require.Equal(t, "f32", f32.CacheType)
	require.Zero(t, f32.MeanKL)
	require.Zero(t, f32.MaxAbsLogitErr)
	require.Equal(t, 1.0, f32.Top1Agreement)
	c := m.Config
	require.EqualValues(t, 2*c.Layers*c.KVHeads*c.HeadDim*4, f32.BytesPerToken)
	require.Equal(t, 0.5, f16.BytesVsF32)
	require.InDelta(t, f16.Perplexity-f32.Perplexity, f16.PerplexityDiff, 1e-12)
	require.Greater(t, e5m2.MeanKL, f16.MeanKL)
	require.Equal(t, rep.Results[0].n, rep.Predicted)

	_, err = CacheTypes(m, SampleText, []quant.CacheType{quant.F16}, 64, 1, nil)
	require.ErrorContains(t, err, "must be f32")
}

// TestCachesOfKeyValuePairs: a cache whose keys and values differ is one row, named K/V, whose
// bytes are the layers' K rows plus V rows; quantizing only the values of the tiny model costs
// less than quantizing both.
func TestCachesOfKeyValuePairs(t *testing.T) {
	t.Parallel()

	m, err := synth.Tiny.Model()
	require.NoError(t, err)
	defer m.Close()
	rep, err := Caches(m, SampleText[:600], []Cache{{quant.F32, quant.F32}, {quant.F32, quant.FP8E5M2}, {quant.FP8E5M2, quant.FP8E5M2}}, 64, 1, nil)
	require.NoError(t, err)
	require.Len(t, rep.Results, 3)
	mixed, both := rep.Results[1], rep.Results[2]
	require.Equal(t, "f32/fp8-e5m2", mixed.CacheType)
	require.Equal(t, []string{"f32", "fp8-e5m2"}, []string{mixed.CacheTypeK, mixed.CacheTypeV})
	c := m.Config
	require.EqualValues(t, c.Layers*c.KVHeads*c.HeadDim*(4+1), mixed.BytesPerToken)
	require.Greater(t, both.MeanKL, mixed.MeanKL)
	require.Positive(t, mixed.MeanKL)
	_, err = Caches(m, SampleText, []Cache{{quant.F32, quant.F16}}, 64, 1, nil)
	require.ErrorContains(t, err, "must be f32")
}
