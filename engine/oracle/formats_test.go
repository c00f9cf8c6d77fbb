package oracle

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/quant"
)

// TestFormatsCoverEveryCacheType: every cache type of quant's table has its own entry
// here (a new type fails until its decoder and bound are written), and the oracle's row
// size, written from the format's definition, agrees with the codec's for every shape the
// type takes.
func TestFormatsCoverEveryCacheType(t *testing.T) {
	t.Parallel()

	for _, ct := range quant.CacheTypes() {
		f, ok := formats[ct]
		require.True(t, ok, "engine/oracle/formats.go has no entry for cache type %v", ct)
		require.NotNil(t, f.decode, "%v: no decoder", ct)
		require.NotNil(t, f.bound, "%v: no bound", ct)
		for _, sh := range [][2]int{{1, 32}, {2, 16}, {4, 8}, {8, 128}, {3, 64}, {1, 7}} {
			if ct.Validate(sh[0], sh[1]) != nil {
				continue
			}
			require.Equal(t, ct.RowBytes(sh[0], sh[1]), f.rowBytes(sh[0], sh[1]), "%v row of %d heads of %d", ct, sh[0], sh[1])
		}
	}
	require.Len(t, formats, len(quant.CacheTypes()), "an entry for a type quant does not have")
}
