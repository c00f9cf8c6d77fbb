package kernels

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrefetchChangesNothing: the hint reads (and never writes) the lines it names, at
// every level, for lengths that end inside a line and for an empty slice.
func TestPrefetchChangesNothing(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implPrefetchAVX)
		buf := make([]byte, 1000)
		for i := range buf {
			buf[i] = byte(i * 7)
		}
		want := slices.Clone(buf)
		for _, n := range []int{0, 1, 63, 64, 65, 999} {
			Prefetch(buf[1 : 1+n])
		}
		require.Equal(t, want, buf)
	})
}
