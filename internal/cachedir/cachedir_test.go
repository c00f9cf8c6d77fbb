package cachedir

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDefault: $KVREF_CACHE wins; without it the cache is kvref under the user's cache
// directory; with neither, the error wraps ErrNoDir and names KVREF_CACHE.
func TestDefault(t *testing.T) {
	t.Setenv("KVREF_CACHE", "/somewhere/kv")
	d, err := Default()
	require.NoError(t, err)
	require.Equal(t, "/somewhere/kv", d)

	t.Setenv("KVREF_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	d, err = Default()
	require.NoError(t, err)
	require.Equal(t, filepath.Join("/xdg", "kvref"), d)

	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	_, err = Default()
	require.ErrorIs(t, err, ErrNoDir)
	require.ErrorContains(t, err, "set KVREF_CACHE")
}
