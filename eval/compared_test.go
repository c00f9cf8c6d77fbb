package eval

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
)

// TestCompared: the baseline comes first once, whatever the list holds, and repeats go.
func TestCompared(t *testing.T) {
	t.Parallel()

	pair := Cache{quant.Q8_0, quant.F16}
	got := Compared(append(Uniform([]quant.CacheType{quant.F16, quant.F32, quant.Q8_0, quant.F16}), pair, Cache{quant.Q8_0, quant.Q8_0}))
	require.Equal(t, []Cache{{quant.F32, quant.F32}, {quant.F16, quant.F16}, {quant.Q8_0, quant.Q8_0}, pair}, got)
	require.Equal(t, []Cache{{quant.F32, quant.F32}}, Compared(nil))
	require.Len(t, Compared(Uniform(quant.CacheTypes())), len(quant.CacheTypes()))
}
