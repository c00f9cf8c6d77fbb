package gguf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIsFile: a file starting with the magic is GGUF; another file, or one shorter than the
// magic, is not; a missing file is an error.
func TestIsFile(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	for name, content := range map[string]string{"yes": Magic + "rest", "no": "GGML....", "short": "GG"} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		ok, err := IsFile(path)
		require.NoError(t, err, "IsFile(%s)", name)
		require.Equal(t, name == "yes", ok, "IsFile(%s)", name)
	}
	_, err := IsFile(filepath.Join(dir, "missing"))
	require.Error(t, err, "IsFile of a missing file: no error")
}
