package kernels

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamReadSumsEverything: the bandwidth probe reads every element, whatever the
// length (whole 256-byte blocks for the assembly, and the rest).
func TestStreamReadSumsEverything(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		use(implStreamReadAVX)
		for _, n := range []int{0, 1, 7, 63, 64, 65, 128, 1000, 4097} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%5 + 1) // small integers: every order gives the exact sum
			}
			want := float32(0)
			for _, v := range x {
				want += v
			}
			require.Equal(t, want, StreamRead(x), "n=%d", n)
			if n > 0 {
				x[n-1] += 1000 // the last element counts too
				require.Equal(t, want+1000, StreamRead(x), "n=%d", n)
			}
		}
	})
}

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
