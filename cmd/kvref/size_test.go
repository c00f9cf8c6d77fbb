package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSizeFlag checks the flag.Value keeps what was typed and the parsed bytes.
func TestSizeFlag(t *testing.T) {
	var f sizeFlag
	require.False(t, f.set())
	require.NoError(t, f.Set("80GB"))
	require.True(t, f.set())
	require.Equal(t, "80GB", f.String())
	require.Equal(t, int64(80e9), f.bytes)
	require.Error(t, f.Set("lots"))
	require.Equal(t, int64(80e9), f.bytes, "a bad value leaves the flag as it was")
}
