package mmapfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenMapsAndCloses(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "f.bin")
	require.NoError(t, os.WriteFile(path, []byte("hello, mapping"), 0o644))
	m, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, "hello, mapping", string(m.Data))
	if runtime.GOOS == "linux" {
		require.True(t, m.Mapped())
	}
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "twice is fine")
	require.Nil(t, m.Data)
}

func TestEmptyFileIsReadNotMapped(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	m, err := Open(path)
	require.NoError(t, err)
	require.False(t, m.Mapped())
	require.Empty(t, m.Data)
}

func TestMissingFile(t *testing.T) {
	t.Parallel()

	_, err := Open(filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
