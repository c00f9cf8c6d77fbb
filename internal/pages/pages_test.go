package pages

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFloatsAreResident: a buffer of at least MinBytes from Floats is in memory before
// anything is written to it, and zero. A kernel without MADV_POPULATE_WRITE (Linux before
// 5.14, other systems) leaves nothing to check.
func TestFloatsAreResident(t *testing.T) {
	if !Populate(make([]byte, 3*page)) {
		t.Skip("this kernel does not populate pages on request (MADV_POPULATE_WRITE, Linux 5.14)")
	}
	f := Floats(3 * MinBytes / 4)
	b := bytesOf(f)
	resident, total, err := Resident(b)
	require.NoError(t, err)
	require.Positive(t, total)
	require.Equal(t, total, resident, "pages of a %d-byte buffer resident", len(b))
	for i, v := range f {
		require.Zero(t, v, "element %d", i)
	}
}
