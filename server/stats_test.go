package server

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model/synth"
)

// TestCheckedTokensSurviveRetire: the server replaces its idle scheduler after every burst
// of requests (retire), folding the old totals into its own; the checked-token count must
// survive that fold, so that with --check it equals every token the server generated.
func TestCheckedTokensSurviveRetire(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{Check: true})
	body := map[string]any{"prompt": []int{1, 5, 6}, "max_tokens": 5, "ignore_eos": true}
	ts.complete(t, body)
	ts.complete(t, body) // the loop retired the first scheduler before this one ran
	st := ts.stats(t)
	require.EqualValues(t, 10, st.GeneratedTokens)
	require.EqualValues(t, 10, st.Engine.CheckedTokens)
}

// TestCombineStatsKeepsEveryTotal: every exported total of engine.Stats set in both
// schedulers' stats is set in the combination, so a field added to engine.Stats cannot be
// dropped silently; the counts add up and the peaks take the larger.
func TestCombineStatsKeepsEveryTotal(t *testing.T) {
	var a, b engine.Stats
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := range va.NumField() {
		if !va.Type().Field(i).IsExported() {
			continue
		}
		switch va.Field(i).Kind() {
		case reflect.Int, reflect.Int64:
			va.Field(i).SetInt(2)
			vb.Field(i).SetInt(3)
		case reflect.Float64:
			va.Field(i).SetFloat(2)
			vb.Field(i).SetFloat(3)
		case reflect.Slice: // per cache group: the larger of each
			va.Field(i).Set(reflect.ValueOf([]int{2, 5}))
			vb.Field(i).Set(reflect.ValueOf([]int{3, 4}))
		default:
			require.FailNow(t, fmt.Sprintf("engine.Stats.%s has kind %s: teach this test how to combine it", va.Type().Field(i).Name, va.Field(i).Kind()))
		}
	}
	c := combineStats(a, b)
	vc := reflect.ValueOf(c)
	for i := range vc.NumField() {
		if f := vc.Type().Field(i); f.IsExported() {
			require.False(t, vc.Field(i).IsZero(), "combineStats drops %s", f.Name)
		}
	}
	require.EqualValues(t, 5, c.CheckedTokens)
	require.EqualValues(t, 5, c.Steps)
	require.EqualValues(t, 3, c.PeakBlocksUsed)
	require.Equal(t, []int{3, 5}, c.PeakGroupBlocksUsed)
	require.InDelta(t, 2.6, c.RowsMean, 1e-12) // (2·2 + 3·3) / 5 steps
}

// TestMetricsPerCacheGroup: a pool with cache groups gets one labelled sample per group.
func TestMetricsPerCacheGroup(t *testing.T) {
	st := Stats{Engine: engine.Stats{PeakGroupBlocksUsed: []int{9, 4}}, Cache: kvcache.Stats{Groups: []kvcache.GroupStats{
		{Group: 0, Layers: []int{5, 11}, BlocksUsed: 8},
		{Group: 1, Layers: []int{0, 1}, Window: 32, BlocksUsed: 3, BlocksReclaimed: 7},
	}}}
	m := formatMetrics(st)
	require.Contains(t, m, `kvref_cache_group_blocks_used{group="0",window="0"} 8`)
	require.Contains(t, m, `kvref_cache_group_blocks_used{group="1",window="32"} 3`)
	require.Contains(t, m, `kvref_cache_group_blocks_reclaimed_total{group="1",window="32"} 7`)
	require.Contains(t, m, `kvref_cache_group_peak_blocks_used{group="0",window="0"} 9`)
	require.NotContains(t, formatMetrics(Stats{}), "cache_group", "a uniform model has no group samples")
}
