package model_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/builtin"
)

// TestIdentityNamesTheWeights: the identity that salts the cache's block hashes is the same
// for one file opened under different paths (absolute, relative, through a symlink), for a
// copy, and for the embedded model with the same bytes; a file that differs in one weight
// byte is another model.
func TestIdentityNamesTheWeights(t *testing.T) {
	data := builtin.GGUF()
	dir := t.TempDir()
	a := filepath.Join(dir, "stories260K.gguf")
	require.NoError(t, os.WriteFile(a, data, 0o644))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	link := filepath.Join(sub, "link.gguf")
	require.NoError(t, os.Symlink(a, link))
	copyPath := filepath.Join(sub, "copy.gguf")
	require.NoError(t, os.WriteFile(copyPath, data, 0o644))
	t.Chdir(sub)

	embedded, err := builtin.Model()
	require.NoError(t, err)
	want := embedded.Identity()
	for _, p := range []string{a, link, "link.gguf", "../stories260K.gguf", copyPath} {
		m, err := model.LoadGGUF(p)
		require.NoError(t, err, p)
		require.Equal(t, builtin.SHA256, m.Digest, p)
		require.Equal(t, want, m.Identity(), "%s is the same model", p)
		m.Close()
	}

	changed := append([]byte(nil), data...)
	changed[len(changed)-7] ^= 1 // a byte of the last tensor's data
	other := filepath.Join(dir, "changed.gguf")
	require.NoError(t, os.WriteFile(other, changed, 0o644))
	m, err := model.LoadGGUF(other)
	require.NoError(t, err)
	defer m.Close()
	require.NotEqual(t, want, m.Identity(), "a file that differs anywhere is another model")
}
