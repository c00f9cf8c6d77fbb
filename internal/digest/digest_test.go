package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestFileNamesContentNotPaths: the same bytes under two names (a copy, a symlink) have one
// digest, any changed byte another.
func TestFileNamesContentNotPaths(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	data := []byte("a model file")
	a := filepath.Join(dir, "a.gguf")
	require.NoError(t, os.WriteFile(a, data, 0o644))
	b := filepath.Join(dir, "b.gguf")
	require.NoError(t, os.WriteFile(b, data, 0o644))
	link := filepath.Join(dir, "link.gguf")
	require.NoError(t, os.Symlink(a, link))
	for _, p := range []string{a, b, link, filepath.Join(dir, ".", "a.gguf")} {
		got, err := File(p)
		require.NoError(t, err)
		require.Equal(t, sum(data), got, p)
	}
	c := filepath.Join(dir, "c.gguf")
	require.NoError(t, os.WriteFile(c, []byte("a model filE"), 0o644))
	got, err := File(c)
	require.NoError(t, err)
	require.NotEqual(t, sum(data), got)
}

// TestLargeFilesAreHashedOncePerVersion: above SmallFile the sum is cached by the file's
// version; a rewrite (new size, new times) is hashed again, even when its modification time
// is set back to the old one.
func TestLargeFilesAreHashedOncePerVersion(t *testing.T) {
	old := SmallFile
	SmallFile = 8
	t.Cleanup(func() { SmallFile = old })
	cache := t.TempDir()
	t.Setenv("KVREF_CACHE", cache)
	dir := t.TempDir()
	p := filepath.Join(dir, "big.gguf")
	data := []byte("0123456789abcdef")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	got, err := File(p)
	require.NoError(t, err)
	require.Equal(t, sum(data), got)
	entries, err := os.ReadDir(filepath.Join(cache, "digests"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the sum is remembered")

	// Poison the entry: a second open must read it, not the file.
	entry := filepath.Join(cache, "digests", entries[0].Name())
	fake := sum([]byte("poison"))
	require.NoError(t, os.WriteFile(entry, []byte(fake+"\n"), 0o644))
	got, err = File(p)
	require.NoError(t, err)
	require.Equal(t, fake, got, "the cached sum is used for an unchanged file")

	// Same size, same modification time, other bytes: the change time differs.
	st, err := os.Stat(p)
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	other := []byte("0123456789ABCDEF")
	require.NoError(t, os.WriteFile(p, other, 0o644))
	require.NoError(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
	got, err = File(p)
	require.NoError(t, err)
	require.Equal(t, sum(other), got)

	// Record stores a known sum for the current version.
	known := sum([]byte("known"))
	require.NoError(t, Record(p, known))
	got, err = File(p)
	require.NoError(t, err)
	require.Equal(t, known, got)
	require.Error(t, Record(p, "nothex"))
}
